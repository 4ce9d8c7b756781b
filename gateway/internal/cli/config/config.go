// Package config keeps the baton command's named contexts: for each, the server's URL and
// the token to call it with, in <user config dir>/baton/config.yaml (as kubectl and gh keep
// theirs), readable only by its user (0600, its directory 0700) since it holds tokens.
//
// BATON_CONFIG names another file. BATON_SERVER and BATON_TOKEN override the chosen
// context's server and token, so scripts and CI need no file at all.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Environment variables read by Resolve and Path.
const (
	EnvConfig  = "BATON_CONFIG"
	EnvServer  = "BATON_SERVER"
	EnvToken   = "BATON_TOKEN"
	EnvContext = "BATON_CONTEXT"
	EnvTeam    = "BATON_TEAM"
)

// DefaultContext is the name login gives a context when none is asked for.
const DefaultContext = "default"

// Context is one server and the credentials to call it with.
type Context struct {
	Name   string `yaml:"name"`
	Server string `yaml:"server"`
	Token  string `yaml:"token"`
	// Team is the team commands work in when they are not told one.
	Team string `yaml:"team,omitempty"`
	// User is who the token acted as when it was saved, to show in `context list`.
	User string `yaml:"user,omitempty"`
}

// File is the whole configuration file.
type File struct {
	CurrentContext string    `yaml:"current-context,omitempty"`
	Contexts       []Context `yaml:"contexts"`
}

// ErrNoServer means neither a context nor BATON_SERVER names a server.
var ErrNoServer = errors.New("no Baton server configured: run `baton login --server URL --token TOKEN`, or set BATON_SERVER and BATON_TOKEN")

// Path is where the file is: BATON_CONFIG, else <user config dir>/baton/config.yaml.
func Path(getenv func(string) string) (string, error) {
	if p := getenv(EnvConfig); p != "" {
		return p, nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("find the user configuration directory (set %s to a file instead): %w", EnvConfig, err)
	}
	return filepath.Join(dir, "baton", "config.yaml"), nil
}

// Load reads the file at path; a missing file is an empty configuration.
func Load(path string) (*File, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &File{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	var f File
	if err := yaml.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return &f, nil
}

// Save writes f to path, atomically, readable only by its user.
func Save(path string, f *File) error {
	raw, err := yaml.Marshal(f)
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	tmp, err := os.CreateTemp(dir, ".config-*.yaml")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := tmp.Write(raw); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// Find returns the context named name.
func (f *File) Find(name string) (Context, bool) {
	i := slices.IndexFunc(f.Contexts, func(c Context) bool { return c.Name == name })
	if i < 0 {
		return Context{}, false
	}
	return f.Contexts[i], true
}

// Put adds c, or replaces the context of its name.
func (f *File) Put(c Context) {
	if i := slices.IndexFunc(f.Contexts, func(o Context) bool { return o.Name == c.Name }); i >= 0 {
		f.Contexts[i] = c
		return
	}
	f.Contexts = append(f.Contexts, c)
}

// Delete removes the context named name and reports whether there was one; deleting the
// current context leaves none current.
func (f *File) Delete(name string) bool {
	n := len(f.Contexts)
	f.Contexts = slices.DeleteFunc(f.Contexts, func(c Context) bool { return c.Name == name })
	if f.CurrentContext == name {
		f.CurrentContext = ""
	}
	return len(f.Contexts) < n
}

// Resolve picks the context to use: the one named (the --context flag), else BATON_CONTEXT,
// else the current one; then BATON_SERVER, BATON_TOKEN and BATON_TEAM override its server,
// token and team.
// With neither a context nor BATON_SERVER it returns ErrNoServer.
func (f *File) Resolve(named string, getenv func(string) string) (Context, error) {
	name := named
	if name == "" {
		name = getenv(EnvContext)
	}
	explicit := name != ""
	if name == "" {
		name = f.CurrentContext
	}
	var c Context
	if name != "" {
		found, ok := f.Find(name)
		if !ok && explicit {
			return Context{}, fmt.Errorf("no context named %q: `baton context list` shows them, `baton login --context %s --server URL --token TOKEN` creates it", name, name)
		}
		c = found
	}
	if v := getenv(EnvServer); v != "" {
		c.Server = v
	}
	if v := getenv(EnvToken); v != "" {
		c.Token = v
	}
	if v := getenv(EnvTeam); v != "" {
		c.Team = v
	}
	if c.Server == "" {
		return Context{}, ErrNoServer
	}
	c.Server = NormalizeServer(c.Server)
	return c, nil
}

// NormalizeServer turns what a user types for a server into its base URL: a scheme added
// when missing (http for loopback, https otherwise), and no trailing slash or /api/v2.
func NormalizeServer(s string) string {
	s = strings.TrimSpace(s)
	if !strings.Contains(s, "://") {
		host := s
		if i := strings.IndexAny(host, ":/"); i >= 0 {
			host = host[:i]
		}
		if host == "localhost" || strings.HasPrefix(host, "127.") || host == "[::1]" {
			s = "http://" + s
		} else {
			s = "https://" + s
		}
	}
	s = strings.TrimRight(s, "/")
	s = strings.TrimSuffix(s, "/api/v2")
	return strings.TrimRight(s, "/")
}
