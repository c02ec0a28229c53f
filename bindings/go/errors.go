package distribute

// #include "dist.h"
import "C"

import (
	"fmt"
	"runtime"
)

// Status is a libdistribute status code (negative on failure).
type Status int32

const (
	OK                 Status = C.DIST_OK
	ErrInvalidArgument Status = C.DIST_ERR_INVALID_ARGUMENT
	ErrUnsupported     Status = C.DIST_ERR_UNSUPPORTED
	ErrNoMemory        Status = C.DIST_ERR_NO_MEMORY
	ErrSystem          Status = C.DIST_ERR_SYSTEM
	ErrPeerFailed      Status = C.DIST_ERR_PEER_FAILED
	ErrTimeout         Status = C.DIST_ERR_TIMEOUT
	ErrMismatch        Status = C.DIST_ERR_MISMATCH
	ErrAuth            Status = C.DIST_ERR_AUTH
	ErrUnavailable     Status = C.DIST_ERR_UNAVAILABLE
	ErrAborted         Status = C.DIST_ERR_ABORTED
	ErrInternal        Status = C.DIST_ERR_INTERNAL
)

// String is the code's name, "DIST_ERR_INVALID_ARGUMENT".
func (s Status) String() string {
	return C.GoString(C.dist_status_string(C.dist_status_t(s)))
}

// Error is a failed libdistribute call: its status and the library's message.
// Match a status with errors.Is(err, distribute.ErrTimeout).
type Error struct {
	Status  Status
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.Status, e.Message) }

// Is lets errors.Is compare an *Error with a Status.
func (e *Error) Is(target error) bool {
	s, ok := target.(Status)
	return ok && s == e.Status
}

// Error makes Status usable as an errors.Is target.
func (s Status) Error() string { return s.String() }

// PeerFailure reports a peer or link failure (-200..-299): the communicator is affected.
func (e *Error) PeerFailure() bool { return e.Status <= -200 && e.Status >= -299 }

// call runs one C call and reads the thread-local message on the same OS thread.
func call(f func() C.dist_status_t) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if status := f(); status != C.DIST_OK {
		return &Error{Status: Status(status), Message: C.GoString(C.dist_last_error())}
	}
	return nil
}

func invalid(format string, args ...any) error {
	return &Error{Status: ErrInvalidArgument, Message: fmt.Sprintf(format, args...)}
}
