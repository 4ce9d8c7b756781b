package executor

import (
	"path/filepath"
	"sync"

	"github.com/fsnotify/fsnotify"
)

// fileEvents tells the followers of steps when a file in their .baton directory changed —
// output written, the exit code recorded — so they wake when it happens rather than look
// every so often. One inotify instance serves every step of a Process: a host allows a
// user few of them, and a runner runs many steps at once.
type fileEvents struct {
	once sync.Once
	// w is nil where inotify cannot be had (another platform, no instance left): the
	// followers then look every Process.Poll.
	w    *fsnotify.Watcher
	mu   sync.Mutex
	dirs map[string]chan struct{}
}

// watch tells of changes in dir on the channel it answers, until stop is called; a nil
// channel when it cannot. One wake-up may stand for several changes.
func (f *fileEvents) watch(dir string) (changed <-chan struct{}, stop func()) {
	f.once.Do(f.start)
	if f.w == nil {
		return nil, func() {}
	}
	ch := make(chan struct{}, 1)
	f.mu.Lock()
	f.dirs[dir] = ch
	f.mu.Unlock()
	forget := func() {
		f.mu.Lock()
		delete(f.dirs, dir)
		f.mu.Unlock()
	}
	if err := f.w.Add(dir); err != nil {
		forget()
		return nil, func() {}
	}
	return ch, func() {
		_ = f.w.Remove(dir)
		forget()
	}
}

func (f *fileEvents) start() {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return
	}
	f.w, f.dirs = w, map[string]chan struct{}{}
	go func() {
		for {
			select {
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				f.wake(filepath.Dir(ev.Name))
			case _, ok := <-w.Errors:
				if !ok {
					return
				}
				// Events were lost (the queue overflowed): everyone looks again.
				f.wake("")
			}
		}
	}()
}

// wake tells the follower of dir, or with "" every follower, that something changed.
func (f *fileEvents) wake(dir string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for d, ch := range f.dirs {
		if dir == "" || d == dir {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}
}
