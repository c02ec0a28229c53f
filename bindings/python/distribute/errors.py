"""Errors: every failing C call becomes a DistError carrying its status and message."""
from . import constants as C
from ._native import lib, text


class DistError(Exception):
    """A libdistribute call failed. `status` is the C status code (negative),
    `status_name` its name ("DIST_ERR_INVALID_ARGUMENT"), `message` the text of
    dist_last_error() at the time of the failure."""

    def __init__(self, status, message):
        self.status = status
        self.status_name = text(lib.dist_status_string(status))
        self.message = message
        super().__init__(f"{self.status_name}: {message}")


class InvalidArgumentError(DistError, ValueError):
    pass


class UnsupportedError(DistError):
    pass


class PeerError(DistError, ConnectionError):
    """A peer or link failed (-200 .. -299): the communicator/cluster is affected."""


class DistTimeoutError(PeerError, TimeoutError):
    pass


_BY_STATUS = {
    C.ERR_INVALID_ARGUMENT: InvalidArgumentError,
    C.ERR_UNSUPPORTED: UnsupportedError,
    C.ERR_TIMEOUT: DistTimeoutError,
}


def error_for(status, cause=None):
    """The DistError for a failed call, reading the thread's last error message now;
    `cause`, the caller's exception that made it fail, is named in the message."""
    message = text(lib.dist_last_error())
    if cause is not None:
        message += f" ({type(cause).__name__}: {cause})"
    return error_from(status, message)


def error_from(status, message):
    """The DistError of a status and the library's message for it."""
    if status in _BY_STATUS:
        cls = _BY_STATUS[status]
    elif -299 <= status <= -200:
        cls = PeerError
    else:
        cls = DistError
    return cls(status, message)


def check(status):
    if status != C.OK:
        raise error_for(status)
