package domain

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/secrets"
)

// ConfigType is the kind of one configurable value of a setting.
type ConfigType string

// Config types.
const (
	ConfigText    ConfigType = "text"
	ConfigNumber  ConfigType = "number"
	ConfigBoolean ConfigType = "boolean"
	ConfigSelect  ConfigType = "select"
	// ConfigSecured values are secrets: stored sealed, masked in every response, kept when
	// a write omits them or sends the mask back.
	ConfigSecured ConfigType = "secured"
)

// SettingConfig is one configurable value of a setting. Values are text, as in v4:
// "true", "90", "https://a,https://b".
type SettingConfig struct {
	Key          string
	Label        string
	Description  string
	Type         ConfigType
	Value        string
	DefaultValue string
	Options      []Option
	Required     bool
}

// Setting is a named group of configurable values.
type Setting struct {
	Key         string
	Name        string
	Description string
	Type        string
	Config      []SettingConfig
}

// Settings is the instance's whole configuration. It is kept as one record, so a change to
// several settings is one write that lands whole or not at all.
type Settings struct {
	Items []Setting
	// Version increases with every change; updates are conditional on it.
	Version int64
}

// A value is named by its path, `<setting key>.<config key>`: "task.default.timeout",
// "features.global.parameters". Setting keys hold no dots, so the first one splits.
func splitPath(path string) (setting, config string) {
	setting, config, _ = strings.Cut(path, ".")
	return setting, config
}

func (s *Settings) find(path string) *SettingConfig {
	key, cfg := splitPath(path)
	for i := range s.Items {
		if s.Items[i].Key != key {
			continue
		}
		for j := range s.Items[i].Config {
			if s.Items[i].Config[j].Key == cfg {
				return &s.Items[i].Config[j]
			}
		}
	}
	return nil
}

// Value returns the value at path as stored (secured values sealed).
func (s Settings) Value(path string) (string, bool) {
	if c := s.find(path); c != nil {
		return c.Value, true
	}
	return "", false
}

// Bool returns the boolean at path, false when unset or not a boolean.
func (s Settings) Bool(path string) bool {
	v, _ := s.Value(path)
	b, _ := strconv.ParseBool(v)
	return b
}

// Int returns the whole number at path, def when unset or not a number.
func (s Settings) Int(path string, def int64) int64 {
	v, _ := s.Value(path)
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return def
	}
	return n
}

// Clone returns a deep copy, so a caller may change it without touching s.
func (s Settings) Clone() Settings {
	out := Settings{Items: make([]Setting, len(s.Items)), Version: s.Version}
	for i, it := range s.Items {
		it.Config = slices.Clone(it.Config)
		for j := range it.Config {
			it.Config[j].Options = slices.Clone(it.Config[j].Options)
		}
		out.Items[i] = it
	}
	return out
}

// Masked returns s as callers may see it: every secured value that is set replaced by the
// mask (and, in case a type ever changes under a stored secret, any sealed value too).
func (s Settings) Masked() Settings {
	out := s.Clone()
	for i := range out.Items {
		for j := range out.Items[i].Config {
			c := &out.Items[i].Config[j]
			if (c.Type == ConfigSecured && c.Value != "") || secrets.IsSealed(c.Value) {
				c.Value = secrets.Mask
			}
		}
	}
	return out
}

// Seed brings s up to the catalogue: settings and config keys it lacks are added with their
// defaults, and the definitions of those it has (names, labels, types, options, defaults)
// are refreshed, while every stored value is kept. Keys the catalogue no longer has are
// left alone. It reports whether anything changed, so an unchanged seed writes nothing.
func (s *Settings) Seed(catalogue []Setting) bool {
	before := s.Clone()
	for _, def := range catalogue {
		i := slices.IndexFunc(s.Items, func(it Setting) bool { return it.Key == def.Key })
		if i < 0 {
			fresh := def
			fresh.Config = nil
			s.Items = append(s.Items, fresh)
			i = len(s.Items) - 1
		}
		it := &s.Items[i]
		it.Name, it.Description, it.Type = def.Name, def.Description, def.Type
		for _, dc := range def.Config {
			j := slices.IndexFunc(it.Config, func(c SettingConfig) bool { return c.Key == dc.Key })
			if j < 0 {
				c := dc
				c.Value = dc.DefaultValue
				c.Options = slices.Clone(dc.Options)
				it.Config = append(it.Config, c)
				continue
			}
			c := &it.Config[j]
			c.Label, c.Description, c.Type = dc.Label, dc.Description, dc.Type
			c.DefaultValue, c.Required, c.Options = dc.DefaultValue, dc.Required, slices.Clone(dc.Options)
		}
	}
	return !settingsEqual(before, *s)
}

func settingsEqual(a, b Settings) bool {
	return slices.EqualFunc(a.Items, b.Items, func(x, y Setting) bool {
		return x.Key == y.Key && x.Name == y.Name && x.Description == y.Description && x.Type == y.Type &&
			slices.EqualFunc(x.Config, y.Config, func(c, d SettingConfig) bool {
				return c.Key == d.Key && c.Label == d.Label && c.Description == d.Description && c.Type == d.Type &&
					c.Value == d.Value && c.DefaultValue == d.DefaultValue && c.Required == d.Required &&
					slices.Equal(c.Options, d.Options)
			})
	})
}

// SettingChange names new values for some config keys of one setting.
type SettingChange struct {
	Key    string
	Config []ConfigChange
}

// ConfigChange is a new value for one config key; a nil Value changes nothing.
type ConfigChange struct {
	Key   string
	Value *string
}

// Apply validates every change, then applies them all: only values of keys that exist
// change. A secured value that is nil or the mask keeps the stored secret, "" clears it,
// and anything else is sealed with seal before it is kept.
func (s *Settings) Apply(changes []SettingChange, seal func(string) (string, error)) error {
	type change struct {
		cfg   *SettingConfig
		value string
	}
	var (
		fields  []apperr.FieldError
		pending []change
	)
	bad := func(field, format string, args ...any) {
		fields = append(fields, apperr.FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	for i, ch := range changes {
		if !slices.ContainsFunc(s.Items, func(it Setting) bool { return it.Key == ch.Key }) {
			bad(fmt.Sprintf("[%d].key", i), "there is no setting '%s'", ch.Key)
			continue
		}
		for j, cc := range ch.Config {
			path := ch.Key + "." + cc.Key
			cfg := s.find(path)
			if cfg == nil {
				bad(fmt.Sprintf("[%d].config[%d].key", i, j), "setting '%s' has no config key '%s'", ch.Key, cc.Key)
				continue
			}
			if cc.Value == nil || (cfg.Type == ConfigSecured && *cc.Value == secrets.Mask) {
				continue
			}
			v, msg := checkConfigValue(path, *cfg, *cc.Value)
			if msg != "" {
				bad(fmt.Sprintf("[%d].config[%d].value", i, j), "%s", msg)
				continue
			}
			pending = append(pending, change{cfg: cfg, value: v})
		}
	}
	if len(fields) > 0 {
		return apperr.Invalid(apperr.RequestInvalid, "The settings are not valid: "+fields[0].Field+": "+fields[0].Message+".", fields...)
	}
	for _, p := range pending {
		if p.cfg.Type == ConfigSecured && p.value != "" {
			sealed, err := seal(p.value)
			if err != nil {
				return err
			}
			p.value = sealed
		}
		p.cfg.Value = p.value
	}
	return nil
}

// checkConfigValue validates and normalizes a value for cfg; msg explains a refusal.
func checkConfigValue(path string, cfg SettingConfig, v string) (_ string, msg string) {
	if cfg.Type != ConfigSecured {
		v = strings.TrimSpace(v)
	}
	if v == "" {
		if cfg.Required {
			return "", "is required"
		}
		return "", ""
	}
	switch cfg.Type {
	case ConfigNumber:
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return "", "must be a number"
		}
	case ConfigBoolean:
		b, err := strconv.ParseBool(strings.ToLower(v))
		if err != nil {
			return "", "must be true or false"
		}
		v = strconv.FormatBool(b)
	case ConfigSelect:
		if !slices.ContainsFunc(cfg.Options, func(o Option) bool { return o.Key == v }) {
			return "", "must be one of the option keys"
		}
	}
	if rule := configRules[path]; rule != nil {
		return rule(v)
	}
	return v, ""
}

// configRules hold checks beyond a config's type, by path.
var configRules = map[string]func(string) (string, string){
	"quotas.maxWorkflowCount":       wholeNumber(0),
	"quotas.maxWorkflowRunMonthly":  wholeNumber(0),
	"quotas.maxWorkflowStorage":     wholeNumber(0),
	"quotas.maxWorkflowRunStorage":  wholeNumber(0),
	"quotas.maxWorkflowRunDuration": wholeNumber(1),
	"quotas.maxConcurrentRuns":      wholeNumber(1),
	"task.default.timeout":          wholeNumber(1),
	"runs.maxDepth":                 wholeNumber(1),
	"runs.maxTreeRuns":              wholeNumber(1),
	"events.sinks":                  httpURLList,
}

func wholeNumber(min int64) func(string) (string, string) {
	return func(v string) (string, string) {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < min {
			return "", fmt.Sprintf("must be a whole number of at least %d", min)
		}
		return strconv.FormatInt(n, 10), ""
	}
}

// httpURLList accepts URLs separated by commas, blanks or new lines and keeps them
// comma-separated.
func httpURLList(v string) (string, string) {
	items := strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' || r == '\r' })
	for _, item := range items {
		u, err := url.Parse(item)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return "", fmt.Sprintf("'%s' is not an http or https URL", item)
		}
	}
	return strings.Join(items, ","), ""
}

// SinkURLs returns the event sinks configured in s.
func (s Settings) SinkURLs() []string {
	v, _ := s.Value("events.sinks")
	return strings.FieldsFunc(v, func(r rune) bool { return r == ',' })
}
