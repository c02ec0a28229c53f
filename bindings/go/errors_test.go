package distribute

import (
	"errors"
	"strings"
	"testing"
)

func TestBadTFConfigCarriesTheCMessage(t *testing.T) {
	_, err := ResolveCluster(&ClusterOptions{
		Resolver: Ptr(ResolverTFConfig),
		Env:      []string{`TF_CONFIG={"cluster": {"worker": 3}}`},
	})
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("want *Error, got %v", err)
	}
	if e.Status != ErrInvalidArgument || !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("status %v", e.Status)
	}
	if !strings.Contains(e.Message, "TF_CONFIG") || !strings.Contains(e.Message, "worker") {
		t.Errorf("message %q", e.Message)
	}
	if err.Error() != "DIST_ERR_INVALID_ARGUMENT: "+e.Message {
		t.Errorf("Error() = %q", err.Error())
	}
}

func TestTaskIndexOutOfRange(t *testing.T) {
	_, err := ClusterFromJSON(`{"cluster": {"worker": ["a:1", "b:2"]}, "task": {"type": "worker", "index": 3}}`)
	if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "3") {
		t.Fatalf("got %v", err)
	}
}

func TestUnknownJob(t *testing.T) {
	c, err := ClusterFromJSON(`{"cluster": {"worker": ["a:1"]}}`)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.NumTasks("ps"); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "ps") {
		t.Fatalf("got %v", err)
	}
}

func TestStatusNames(t *testing.T) {
	for status, name := range map[Status]string{OK: "DIST_OK", ErrMismatch: "DIST_ERR_MISMATCH", Status(4242): "DIST_ERR_UNKNOWN"} {
		if status.String() != name {
			t.Errorf("%d: %q", int32(status), status.String())
		}
	}
	if !(&Error{Status: ErrPeerFailed}).PeerFailure() || (&Error{Status: ErrAuth - 100}).PeerFailure() {
		t.Error("PeerFailure")
	}
}

func TestVersionAndBuild(t *testing.T) {
	if Version() != 0x000100 || VersionString() != "0.1.0" {
		t.Errorf("%x %s", Version(), VersionString())
	}
	if BuildFeatures()&FeatureUCX == 0 {
		t.Error("UCX not reported")
	}
	info, err := BuildInfo()
	if err != nil || !strings.Contains(info, `"version"`) {
		t.Fatalf("%v %s", err, info)
	}
}
