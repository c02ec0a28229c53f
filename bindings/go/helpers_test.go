package distribute

import (
	"os"
	"path/filepath"
	"testing"
)

// single is a single-process context: a cluster with no tasks is rank 0 of 1.
func single(t *testing.T) (*Cluster, *Context) {
	t.Helper()
	cluster, err := ClusterFromJSON("{}")
	if err != nil {
		t.Fatal(err)
	}
	context, err := NewContext(cluster, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		context.Close()
		cluster.Close()
	})
	return cluster, context
}

func world(t *testing.T) *Comm {
	_, context := single(t)
	w, err := context.World()
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func buildDir() string {
	if dir := os.Getenv("DIST_BUILD_DIR"); dir != "" {
		return dir
	}
	abs, _ := filepath.Abs("../../build")
	return abs
}
