// Flight-recorder dumps on a signal, for a job that hangs where no code of
// its own can ask (dist_context_dump is the call for that). Opt-in, since the
// library installs no signal handlers by default: DIST_FLIGHT_RECORDER_SIGNAL
// = USR1 or USR2 installs a handler for that signal (once per process) that
// wakes a thread of its own, which writes each live context's dump to
// "<DIST_FLIGHT_RECORDER_DIR, else /tmp>/dist-flight.<rank>.<pid>.json"
// (atomically) and logs where. Nothing kills the process.
#pragma once

namespace dist {

class Context;

// The signal DIST_FLIGHT_RECORDER_SIGNAL asks for, 0 when unset;
// kInvalidArgument for a name it does not take.
int dump_signal_from_environment();
// Adds `context` to the contexts dumped on `signal` (nothing for 0). Does
// not throw: a handler that cannot be installed is logged.
void watch_dump_signal(Context* context, int signal);
// Before the context goes away.
void unwatch_dump_signal(Context* context);

}  // namespace dist
