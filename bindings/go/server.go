package distribute

// #include "dist.h"
import "C"

import (
	"runtime"
	"runtime/cgo"
	"sync"
	"time"
)

// ServerOptions are dist_server_options_t; empty fields keep the defaults.
type ServerOptions struct {
	Address       string // "host:port"; port 0 picks a free port. Default: the cluster task's address
	Token         string // default DIST_CLUSTER_TOKEN, then DIST_CLUSTER_TOKEN_FILE
	TokenFile     string
	CheckpointDir string        // a checkpoint root restored from (its LATEST) at start
	IOTimeout     time.Duration // 0: the default, 60 s
	// Log, if set, receives each log line, from the server's threads and possibly
	// concurrently. A panic in it is recovered and dropped: no call waits for it.
	Log func(line string)
}

// Server is the standard parameter server, serving from background threads of
// this process. Address, Describe, Stop and Join may be called from any
// goroutine; Close (or the garbage collector) stops, joins and frees it.
type Server struct {
	mu     sync.RWMutex // Close holds it exclusively: destroy must not race other calls
	handle *C.dist_server_t
	log    cgo.Handle // 0 without a log sink; deleted after destroy
}

//export goServerLog
func goServerLog(message *C.char, handle C.uintptr_t) {
	log := cgo.Handle(handle).Value().(func(string))
	line := C.GoString(message)
	defer func() { _ = recover() }()
	log(line)
}

// StartServer runs dist_server_start; cluster may be nil when o.Address is set.
func StartServer(cluster *Cluster, o ServerOptions) (*Server, error) {
	var raw C.dist_server_options_t
	var strings cStrings
	defer strings.free()
	text := func(v string, bit C.uint64_t) *C.char {
		if v == "" {
			return nil
		}
		raw.field_mask |= bit
		return strings.add(v)
	}
	raw.address = text(o.Address, C.DIST_SERVER_OPT_ADDRESS)
	raw.token = text(o.Token, C.DIST_SERVER_OPT_TOKEN)
	raw.token_file = text(o.TokenFile, C.DIST_SERVER_OPT_TOKEN_FILE)
	raw.checkpoint_dir = text(o.CheckpointDir, C.DIST_SERVER_OPT_CHECKPOINT_DIR)
	if o.IOTimeout != 0 {
		raw.field_mask |= C.DIST_SERVER_OPT_IO_TIMEOUT_MS
		raw.io_timeout_ms = C.int64_t(o.IOTimeout.Milliseconds())
	}
	var log cgo.Handle
	if o.Log != nil {
		log = cgo.NewHandle(o.Log)
	}
	var h *C.dist_server_t
	err := call(func() C.dist_status_t { return C.go_server_start(cluster.raw(), &raw, C.uintptr_t(log), &h) })
	runtime.KeepAlive(cluster)
	if err != nil {
		if log != 0 {
			log.Delete()
		}
		return nil, err
	}
	s := &Server{handle: h, log: log}
	runtime.SetFinalizer(s, (*Server).Close)
	return s, nil
}

// Close stops, joins and frees the server. Idempotent.
func (s *Server) Close() error {
	runtime.SetFinalizer(s, nil)
	_ = s.Stop() // ends a Join running elsewhere, which holds the read lock
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.handle != nil {
		C.dist_server_destroy(s.handle)
		s.handle = nil
		if s.log != 0 {
			s.log.Delete()
			s.log = 0
		}
	}
	return nil
}

// shared runs one C call on the server under the read lock (nil after Close:
// the library reports the NULL handle).
func (s *Server) shared(f func(h *C.dist_server_t) C.dist_status_t) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	h := s.handle
	return call(func() C.dist_status_t { return f(h) })
}

// Address is the "host:port" actually listened at.
func (s *Server) Address() (string, error) {
	var out *C.char
	var address string
	err := s.shared(func(h *C.dist_server_t) C.dist_status_t {
		status := C.dist_server_address(h, &out)
		if status == C.DIST_OK {
			address = C.GoString(out) // borrowed from the server: copied before Close can run
		}
		return status
	})
	return address, err
}

// Describe is what the server holds, as JSON: address, stopping, requests, variables.
func (s *Server) Describe() (string, error) {
	var out *C.char
	if err := s.shared(func(h *C.dist_server_t) C.dist_status_t { return C.dist_server_describe(h, &out) }); err != nil {
		return "", err
	}
	return takeString(out), nil
}

// Join waits until the server has stopped; timeout < 0 waits without bound.
// ErrTimeout when it still serves at the timeout.
func (s *Server) Join(timeout time.Duration) error {
	ms := C.int64_t(-1)
	if timeout >= 0 {
		ms = C.int64_t(timeout.Milliseconds())
	}
	return s.shared(func(h *C.dist_server_t) C.dist_status_t { return C.dist_server_join(h, ms) })
}

// Stop asks the server to stop; Join waits for it.
func (s *Server) Stop() error {
	return s.shared(func(h *C.dist_server_t) C.dist_status_t { return C.dist_server_stop(h) })
}

// CheckpointOptions are dist_checkpoint_options_t; empty fields keep the defaults.
type CheckpointOptions struct {
	Token     string
	TokenFile string
	Timeout   time.Duration // for every server to finish; 0: the default, 600 s
}

func checkpointCall(o CheckpointOptions, f func(*C.dist_checkpoint_options_t, *cStrings, **C.char) C.dist_status_t) (string, error) {
	var raw C.dist_checkpoint_options_t
	var strings cStrings
	defer strings.free()
	if o.Token != "" {
		raw.field_mask |= C.DIST_CHECKPOINT_OPT_TOKEN
		raw.token = strings.add(o.Token)
	}
	if o.TokenFile != "" {
		raw.field_mask |= C.DIST_CHECKPOINT_OPT_TOKEN_FILE
		raw.token_file = strings.add(o.TokenFile)
	}
	if o.Timeout != 0 {
		raw.field_mask |= C.DIST_CHECKPOINT_OPT_TIMEOUT_MS
		raw.timeout_ms = C.int64_t(o.Timeout.Milliseconds())
	}
	var out *C.char
	if err := call(func() C.dist_status_t { return f(&raw, &strings, &out) }); err != nil {
		return "", err
	}
	return takeString(out), nil
}

// CheckpointSave saves every ps task's shards of cluster as checkpoint step under
// root and returns the checkpoint directory, "<root>/ckpt-<step>".
func CheckpointSave(cluster *Cluster, root string, step int64, o CheckpointOptions) (string, error) {
	defer runtime.KeepAlive(cluster)
	return checkpointCall(o, func(raw *C.dist_checkpoint_options_t, strings *cStrings, out **C.char) C.dist_status_t {
		return C.dist_checkpoint_save(cluster.raw(), strings.add(root), C.int64_t(step), raw, out)
	})
}

// CheckpointRestore restores every ps task of cluster from directory (a root, whose
// LATEST is used, or one ckpt-<step> directory) and returns the directory used.
func CheckpointRestore(cluster *Cluster, directory string, o CheckpointOptions) (string, error) {
	defer runtime.KeepAlive(cluster)
	return checkpointCall(o, func(raw *C.dist_checkpoint_options_t, strings *cStrings, out **C.char) C.dist_status_t {
		return C.dist_checkpoint_restore(cluster.raw(), strings.add(directory), raw, out)
	})
}
