package executor

import (
	"path/filepath"
	"sync"

	"github.com/fsnotify/fsnotify"
)

// fileEvents tells the followers of steps when a file in their .baton directory changed —
// output written, the exit code recorded — so they wake when it happens rather than look
// every so often. One inotify instance serves every step of a Process that is being
// followed, and is closed when none is: a host allows a user few instances, and a runner
// runs many steps at once.
type fileEvents struct {
	mu sync.Mutex
	// w is nil while no step is followed, or where inotify cannot be had (another
	// platform, no instance left): followers then look every Process.Poll.
	w    *fsnotify.Watcher
	dirs map[string]chan struct{}
}

// watch tells of changes in dir on the channel it answers, until stop is called; a nil
// channel when it cannot. One wake-up may stand for several changes.
func (f *fileEvents) watch(dir string) (changed <-chan struct{}, stop func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
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

// closeIfIdle closes the watcher once no step is followed. f.mu is held.
func (f *fileEvents) closeIfIdle() {
	if f.w != nil && len(f.dirs) == 0 {
		_ = f.w.Close()
		f.w, f.dirs = nil, nil
	}
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
