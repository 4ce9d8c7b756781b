package testkit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/baton-flow/baton/libs/embedded"
)

// mongoDirPrefix names FerretDB data dirs in the temp dir: prefix, owner PID, "-", random.
const mongoDirPrefix = "baton-testkit-mongo-"

func startMongoEmbedded(ctx context.Context) (string, func(), error) {
	// Binaries killed before Main could clean up (or not using Main) leave their data
	// behind; the next start removes it.
	removeOrphanMongoDirs()
	dir, err := os.MkdirTemp("", fmt.Sprintf("%s%d-", mongoDirPrefix, os.Getpid()))
	if err != nil {
		return "", nil, fmt.Errorf("data dir: %w", err)
	}
	m, err := embedded.StartMongo(ctx, embedded.MongoConfig{Dir: dir})
	if err != nil {
		_ = os.RemoveAll(dir)
		return "", nil, err
	}
	stop := func() {
		m.Close()
		_ = os.RemoveAll(dir)
	}
	return m.URI(), stop, nil
}

// removeOrphanMongoDirs deletes data dirs whose owning process is gone.
func removeOrphanMongoDirs() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), mongoDirPrefix+"*"))
	for _, dir := range dirs {
		rest := strings.TrimPrefix(filepath.Base(dir), mongoDirPrefix)
		pidStr, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidStr)
		if !ok || err != nil || processAlive(pid) {
			continue
		}
		_ = os.RemoveAll(dir)
	}
}

// processAlive reports whether pid exists; when it cannot tell, it says yes.
func processAlive(pid int) bool {
	if runtime.GOOS == "windows" {
		return true // signal 0 is not supported there
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	// EPERM: it exists but belongs to someone else.
	return err == nil || errors.Is(err, syscall.EPERM)
}

func startKafkaEmbedded() ([]string, func(), error) {
	k, err := embedded.StartKafka(embedded.KafkaConfig{})
	if err != nil {
		return nil, nil, err
	}
	return k.Brokers(), k.Close, nil
}
