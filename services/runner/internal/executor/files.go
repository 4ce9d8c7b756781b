package executor

import (
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// fileEvents tells the followers of steps when a file in their .baton directory changed —
// output written, the exit code recorded — so they wake when it happens rather than look
// every so often. One inotify instance (stepFiles) serves every step followed in the
// process, and is closed once none has been for idleClose: a host allows a user few
// instances (128 by default), and a runner runs many steps at once.
type fileEvents struct {
	mu sync.Mutex
	// w is nil while no step has been followed lately, or where inotify cannot be had
	// (another platform, no instance left): followers then look every Process.Poll.
	w    *fsnotify.Watcher
	dirs map[string]chan struct{}
	// idle, set while no step is followed, closes w when it fires.
	idle *time.Timer
}

// stepFiles follows the steps of every Process.
var stepFiles fileEvents

// idleClose is how long the inotify instance outlives the last step followed. Closing it
// waits for its reader to stop, which took up to 16 ms on a busy host: a runner taking
// one step after another must not pay that, and open it again, on every step.
const idleClose = 30 * time.Second

// watch tells of changes in dir on the channel it answers, until stop is called; a nil
// channel when it cannot. One wake-up may stand for several changes.
func (f *fileEvents) watch(dir string) (changed <-chan struct{}, stop func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.idle != nil {
		f.idle.Stop()
		f.idle = nil
	}
	if f.w == nil {
		w, err := fsnotify.NewWatcher()
		if err != nil {
			return nil, func() {}
		}
		f.w, f.dirs = w, map[string]chan struct{}{}
		go f.dispatch(w)
	}
	w := f.w
	if err := w.Add(dir); err != nil {
		f.closeIfIdle()
		return nil, func() {}
	}
	ch := make(chan struct{}, 1)
	f.dirs[dir] = ch
	return ch, func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		_ = w.Remove(dir)
		delete(f.dirs, dir)
		f.closeIfIdle()
	}
}

// closeIfIdle closes the watcher idleClose after the last step stopped being followed,
// unless one is followed again meanwhile. f.mu is held.
func (f *fileEvents) closeIfIdle() {
	if f.w == nil || len(f.dirs) > 0 || f.idle != nil {
		return
	}
	w := f.w
	var t *time.Timer
	t = time.AfterFunc(idleClose, func() {
		f.mu.Lock()
		if f.idle != t {
			f.mu.Unlock()
			return
		}
		f.w, f.dirs, f.idle = nil, nil, nil
		f.mu.Unlock()
		// Outside the lock: the reader may be waiting for it to hand over an event.
		_ = w.Close()
	})
	f.idle = t
}

// dispatch hands w's events to the followers until w is closed.
func (f *fileEvents) dispatch(w *fsnotify.Watcher) {
	for {
		select {
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			f.wake(w, filepath.Dir(ev.Name))
		case _, ok := <-w.Errors:
			if !ok {
				return
			}
			// Events were lost (the queue overflowed): everyone looks again.
			f.wake(w, "")
		}
	}
}

// wake tells the follower of dir, or with "" every follower, that something changed, if w
// is still the watcher in use.
func (f *fileEvents) wake(w *fsnotify.Watcher, dir string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.w != w {
		return
	}
	for d, ch := range f.dirs {
		if dir == "" || d == dir {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}
}
