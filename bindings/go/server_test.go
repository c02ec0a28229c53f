package distribute

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const serverToken = "go-binding-test-token"

func TestServerLifecycle(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	s, err := StartServer(nil, ServerOptions{Address: "127.0.0.1:0", Token: serverToken, Log: func(line string) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, line)
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	address, err := s.Address()
	if err != nil {
		t.Fatal(err)
	}
	host, port, _ := strings.Cut(address, ":")
	if n, _ := strconv.Atoi(port); host != "127.0.0.1" || n <= 0 {
		t.Fatalf("address %q", address)
	}
	text, err := s.Describe()
	if err != nil {
		t.Fatal(err)
	}
	var described struct {
		Address   string
		Variables []any
	}
	if err := json.Unmarshal([]byte(text), &described); err != nil || described.Address != address ||
		described.Variables == nil || len(described.Variables) != 0 {
		t.Fatalf("describe %q: %v", text, err)
	}
	mu.Lock()
	if len(lines) == 0 || !strings.Contains(strings.Join(lines, "\n"), "serving at") {
		t.Errorf("log lines %q", lines)
	}
	mu.Unlock()
	if err := s.Join(30 * time.Millisecond); !errors.Is(err, ErrTimeout) {
		t.Fatalf("join while serving: %v", err)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := s.Join(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s.Close()
	if _, err := s.Address(); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("address after close: %v", err)
	}
}

func TestServerBadOptions(t *testing.T) {
	_, err := StartServer(nil, ServerOptions{Address: "127.0.0.1", Token: serverToken})
	var e *Error
	if !errors.As(err, &e) || e.Status != ErrInvalidArgument || !strings.Contains(e.Message, "127.0.0.1") {
		t.Fatalf("address without a port: %v", err)
	}
	if _, err := StartServer(nil, ServerOptions{Token: serverToken}); !errors.As(err, &e) ||
		!strings.Contains(e.Message, "no address") {
		t.Fatalf("no address: %v", err)
	}
	t.Setenv("DIST_CLUSTER_TOKEN", "") // empty is unset for the library
	t.Setenv("DIST_CLUSTER_TOKEN_FILE", "")
	if _, err := StartServer(nil, ServerOptions{Address: "127.0.0.1:0"}); !errors.As(err, &e) ||
		e.Status != ErrInvalidArgument || !strings.Contains(e.Message, "needs the cluster token") {
		t.Fatalf("no token: %v", err)
	}
	if _, err := StartServer(nil, ServerOptions{Address: "127.0.0.1:0", Token: serverToken, IOTimeout: -time.Second}); !errors.As(err, &e) ||
		!strings.Contains(e.Message, "io_timeout_ms -1000") {
		t.Fatalf("negative io timeout: %v", err)
	}
	s, err := StartServer(nil, ServerOptions{Address: "127.0.0.1:0", Token: serverToken})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	address, _ := s.Address()
	if _, err := StartServer(nil, ServerOptions{Address: address, Token: serverToken}); !errors.As(err, &e) ||
		e.Status != ErrUnavailable || !strings.Contains(e.Message, address) {
		t.Fatalf("address taken: %v", err)
	}
	if _, err := CheckpointSave(nil, t.TempDir(), 1, CheckpointOptions{Token: serverToken}); !errors.As(err, &e) ||
		!strings.Contains(e.Message, "cluster is NULL") {
		t.Fatalf("nil cluster: %v", err)
	}
}

// A log sink that panics does not take the process down: the panic is dropped.
func TestServerLogPanics(t *testing.T) {
	s, err := StartServer(nil, ServerOptions{Address: "127.0.0.1:0", Token: serverToken, Log: func(string) { panic("sink") }})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestCheckpointSaveRestore(t *testing.T) {
	s, err := StartServer(nil, ServerOptions{Address: "127.0.0.1:0", Token: serverToken})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	address, _ := s.Address()
	cluster, err := ClusterFromJSON(fmt.Sprintf(
		`{"cluster":{"ps":[%q],"worker":["127.0.0.1:1"]},"task":{"type":"worker","index":0}}`, address))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	root := t.TempDir()
	o := CheckpointOptions{Token: serverToken, Timeout: 20 * time.Second}
	path, err := CheckpointSave(cluster, root, 2, o)
	if err != nil || path != filepath.Join(root, "ckpt-2") {
		t.Fatalf("save: %q %v", path, err)
	}
	for _, f := range []string{filepath.Join(path, "shard-00000-of-00001.ckpt"), filepath.Join(path, "manifest.json"),
		filepath.Join(root, "LATEST")} {
		if _, err := os.Stat(f); err != nil {
			t.Error(err)
		}
	}
	if restored, err := CheckpointRestore(cluster, root, o); err != nil || restored != path {
		t.Fatalf("restore: %q %v", restored, err)
	}
	wrong := o
	wrong.Token = "wrong-token"
	if _, err := CheckpointSave(cluster, root, 3, wrong); !errors.Is(err, ErrAuth) {
		t.Fatalf("wrong token: %v", err)
	}

	// A corrupt shard file is refused, naming it, by a restore and by a server told to restore from it.
	shard := filepath.Join(path, "shard-00000-of-00001.ckpt")
	corrupt(t, shard)
	var e *Error
	if _, err := CheckpointRestore(cluster, root, o); !errors.As(err, &e) || e.Status != ErrInvalidArgument ||
		!strings.Contains(e.Message, "is corrupt") || !strings.Contains(e.Message, "shard-00000-of-00001.ckpt") {
		t.Fatalf("restore of a corrupt checkpoint: %v", err)
	}
	if _, err := StartServer(nil, ServerOptions{Address: "127.0.0.1:0", Token: serverToken, CheckpointDir: root}); !errors.As(err, &e) ||
		!strings.Contains(e.Message, "is corrupt") {
		t.Fatalf("server restoring a corrupt checkpoint: %v", err)
	}
}

// corrupt flips one byte of a file in place.
func corrupt(t *testing.T, file string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil || len(data) < 4 {
		t.Fatalf("read %s: %v", file, err)
	}
	data[3] ^= 0xff
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
