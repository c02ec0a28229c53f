package distribute

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// timelineEvent is the part of a Chrome trace event the tests read.
type timelineEvent struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat"`
	Ph   string         `json:"ph"`
	Args map[string]any `json:"args"`
}

func contextWithTimeline(t *testing.T, timeline string) (*Context, error) {
	t.Helper()
	cluster, err := ClusterFromJSON("{}")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cluster.Close() })
	return NewContext(cluster, &ContextOptions{Timeline: Ptr(timeline)})
}

func TestTimelineRecordsTheCollectives(t *testing.T) {
	prefix := filepath.Join(t.TempDir(), "run")
	context, err := contextWithTimeline(t, prefix)
	if err != nil {
		t.Fatal(err)
	}
	w := must(context.World())
	data := []float32{1, 2, 3, 4, 5}
	out := make([]float32, len(data))
	if err := AllReduce(w, data, out, OpSum); err != nil {
		t.Fatal(err)
	}
	if err := w.Barrier(); err != nil {
		t.Fatal(err)
	}
	context.Close() // closes the world too, and with it the file's array

	text, err := os.ReadFile(prefix + ".0.json")
	if err != nil {
		t.Fatal(err)
	}
	var events []timelineEvent
	if err := json.Unmarshal(text, &events); err != nil {
		t.Fatalf("not a JSON array of events: %v\n%s", err, text)
	}
	var metadata, calls []timelineEvent
	barrier := false
	for _, e := range events {
		switch {
		case e.Name == "libdistribute":
			metadata = append(metadata, e)
		case e.Name == "all_reduce":
			calls = append(calls, e)
		case e.Name == "barrier" && e.Cat == "collective":
			barrier = true
		}
	}
	// encoding/json reads every number into an any as float64.
	if len(metadata) != 1 || metadata[0].Ph != "M" || metadata[0].Args["rank"] != float64(0) {
		t.Errorf("metadata %+v\n%s", metadata, text)
	}
	if len(calls) != 1 {
		t.Fatalf("all_reduce events %+v\n%s", calls, text)
	}
	call := calls[0]
	if call.Cat != "collective" || call.Ph != "X" || call.Args["bytes"] != float64(4*len(data)) ||
		call.Args["path"] != "self" || call.Args["dtype"] != "f32" {
		t.Errorf("all_reduce event %+v", call)
	}
	if !barrier {
		t.Errorf("no barrier event\n%s", text)
	}
}

func TestEmptyTimelineIsRefused(t *testing.T) {
	_, err := contextWithTimeline(t, "")
	var e *Error
	if !errors.As(err, &e) || e.Status != ErrInvalidArgument || !strings.Contains(e.Message, "timeline is empty") {
		t.Errorf("got %v", err)
	}
}

func TestTimelineInAMissingDirectoryNamesTheFile(t *testing.T) {
	prefix := filepath.Join(t.TempDir(), "missing", "run")
	_, err := contextWithTimeline(t, prefix)
	var e *Error
	if !errors.As(err, &e) || e.Status != ErrInvalidArgument ||
		!strings.Contains(e.Message, "cannot create '"+prefix+".0.json'") {
		t.Errorf("got %v", err)
	}
}
