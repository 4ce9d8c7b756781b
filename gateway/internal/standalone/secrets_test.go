package standalone_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/embedded"
	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/host"
)

// A workflow uses a secret of every kind — a global password parameter, a team password
// parameter, a workflow password parameter's default, a password parameter's value given
// at submit and a catalogue task's password parameter default — in a script, in a task's params, in setwfproperty tasks and in a result that
// travels to the tasks after it. The script gets every real value; a team reader sees every
// one masked; and no database file of the data directory and no message of the broker
// holds any of them, in clear or in base64.
func TestIntegrationSecretsNeverInClear(t *testing.T) {
	t.Parallel()
	secretValues := map[string]string{
		"global":    "glob4l-Secret-value-91",
		"team":      "te4m-Secret-value-27",
		"default":   "def4ult-Secret-value-38",
		"submitted": "subm1tted-Secret-value-64",
	}
	// The default of a team task's password parameter, which that task's own script reads.
	const taskSecret = "t4sk-Secret-value-53"
	everySecret := map[string]string{"task": taskSecret}
	for k, v := range secretValues {
		everySecret[k] = v
	}
	o := startObserved(t, nil)
	b := o.baton

	code, out := b.call(t, http.MethodPost, "/api/v2/parameters", b.token,
		fmt.Sprintf(`{"name":"gpw","type":"password","value":%q}`, secretValues["global"]))
	require.Equal(t, http.StatusCreated, code, out)
	code, out = b.call(t, http.MethodPost, "/api/v2/team", b.token,
		fmt.Sprintf(`{"name":"vault","parameters":[{"name":"tpw","type":"password","value":%q},{"name":"region","type":"text","value":"eu"}]}`, secretValues["team"]))
	require.Equal(t, http.StatusCreated, code, out)
	code, out = b.call(t, http.MethodPost, "/api/v2/token", b.token, `{"type":"team","name":"reader","principal":"vault","permissions":["**/read"]}`)
	require.Equal(t, http.StatusCreated, code, out)
	reader := out["token"].(string)
	code, out = b.call(t, http.MethodPost, "/api/v2/team/vault/task", b.token, mustJSON(t, map[string]any{
		"name": "deployer", "type": "template",
		"spec": map[string]any{
			"image":   "alpine:3",
			"script":  `printf '%s' "$(params.key)" | sha256sum | cut -c1-64 > $(results.key.path)`,
			"params":  []any{map[string]any{"name": "key", "type": "password", "default": taskSecret}},
			"results": []any{map[string]any{"name": "key"}},
		},
	}))
	require.Equal(t, http.StatusCreated, code, out)

	// The script prints each value's hash and writes it as a result, so the test can tell
	// it got the real ones; it also prints them and writes one into a result that a later
	// setwfproperty passes on.
	script := `set -e
h() { printf '%s' "$1" | sha256sum | cut -c1-64; }
echo "global $(global.params.gpw) team $(team.params.tpw)"
h "$(global.params.gpw)" > $(results.global.path)
h "$(team.params.tpw)" > $(results.team.path)
h "$(params.dpw)" > $(results.default.path)
h "$(workflow.params.spw)" > $(results.submitted.path)
printf 'carried %s' "$(params.spw)" > $(results.carried.path)`
	workflow := map[string]any{
		"name": "vaulted",
		"params": []any{
			map[string]any{"name": "dpw", "type": "password", "default": secretValues["default"]},
			map[string]any{"name": "spw", "type": "password", "required": true},
		},
		"tasks": []any{
			map[string]any{"name": "start", "type": "start"},
			map[string]any{"name": "use", "type": "script", "dependencies": []any{map[string]any{"taskRef": "start"}},
				"results": []any{"global", "team", "default", "submitted", "carried"},
				"params": []any{
					map[string]any{"name": "script", "value": script},
					map[string]any{"name": "token", "value": "Bearer $(global.params.gpw)"},
				}},
			prop("from-team", "teamValue", "$(team.params.tpw)", "use"),
			prop("from-default", "defaultValue", "$(params.dpw)", "from-team"),
			prop("from-result", "carriedValue", "$(tasks.use.results.carried)", "from-default"),
			prop("plain", "region", "$(team.params.region)", "from-result"),
			map[string]any{"name": "deploy", "type": "template", "taskRef": "vault/deployer",
				"dependencies": []any{map[string]any{"taskRef": "plain"}}},
			map[string]any{"name": "end", "type": "end", "dependencies": []any{map[string]any{"taskRef": "deploy"}}},
		},
	}
	require.Eventually(t, func() bool {
		code, _ := b.call(t, http.MethodPost, "/api/v2/team/vault/workflow", b.token, mustJSON(t, workflow))
		return code == http.StatusCreated
	}, 30*time.Second, 20*time.Millisecond)
	code, run := b.call(t, http.MethodPost, "/api/v2/team/vault/workflow/vaulted/submit?start=true", b.token,
		fmt.Sprintf(`{"params":{"spw":%q}}`, secretValues["submitted"]))
	require.Equal(t, http.StatusCreated, code, run)
	id := run["id"].(string)
	var done map[string]any
	require.Eventually(t, func() bool {
		_, done = b.call(t, http.MethodGet, "/api/v2/team/vault/workflowrun/"+id, reader, "")
		return done["phase"] == "completed"
	}, 60*time.Second, 50*time.Millisecond)
	require.Equal(t, "succeeded", done["status"], done)

	// The script got the real values.
	use := done["tasks"].([]any)[1].(map[string]any)
	results := byName(t, use["results"])
	for kind, v := range secretValues {
		assert.Equal(t, sha256Hex(v), results[kind], "the script's %s value", kind)
	}

	var deploy map[string]any
	for _, tr := range done["tasks"].([]any) {
		if tr.(map[string]any)["name"] == "deploy" {
			deploy = tr.(map[string]any)
		}
	}
	require.NotNil(t, deploy, "the catalogue task ran")
	assert.Equal(t, sha256Hex(taskSecret), byName(t, deploy["results"])["key"], "the catalogue task's default")

	// A team reader sees every one masked, wherever it went.
	assert.Equal(t, map[string]any{"teamValue": "********", "defaultValue": "********", "carriedValue": "********", "region": "eu"},
		byName(t, done["results"]))
	assert.Equal(t, map[string]any{"dpw": "********", "spw": "********"}, byName(t, done["params"]))
	assert.Equal(t, "********", results["carried"])
	assert.Equal(t, "********", byName(t, use["params"])["token"])
	assert.Equal(t, "********", byName(t, use["params"])["script"])
	for _, k := range []int{2, 3, 4} {
		tr := done["tasks"].([]any)[k].(map[string]any)
		assert.Equal(t, "********", byName(t, tr["params"])["value"], tr["name"])
	}
	var answers strings.Builder
	for _, path := range []string{
		"/api/v2/team/vault/workflowrun/" + id, "/api/v2/team/vault/workflowrun/query",
		"/api/v2/taskrun/" + use["id"].(string) + "/log",
		"/api/v2/team/vault/task/deployer", "/api/v2/team/vault/task/query",
	} {
		answers.WriteString(readAll(t, b, path, reader))
	}
	assert.Contains(t, answers.String(), "global ******** team ********", "the log is masked")
	assert.Contains(t, answers.String(), `"default":"********"`, "the catalogue task is answered masked")
	assertNoSecret(t, "the API's answers", []byte(answers.String()), everySecret)

	// Runs that ended are put away in the archive; wait for it, so the files hold it.
	require.Eventually(t, func() bool {
		code, count := b.call(t, http.MethodGet, "/api/v2/team/vault/workflowrun/count", b.token, "")
		return code == http.StatusOK && count["status"].(map[string]any)["succeeded"] == float64(1)
	}, 10*time.Second, 20*time.Millisecond)

	o.assertNoSecretAtRest(t, id, "vaulted", everySecret)
}

// observed is a standalone Baton whose data directory and broker are the test's own, so
// that every database file and every message can be read back.
type observed struct {
	*baton
	dataDir string
	broker  *embedded.Kafka
}

// startObserved starts an observed Baton with vars beside its own.
func startObserved(t *testing.T, vars map[string]string) *observed {
	t.Helper()
	var topics []string
	for _, topic := range events.AllTopics {
		topics = append(topics, events.Topic(events.DefaultTopicPrefix, topic), events.DeadLetter(events.Topic(events.DefaultTopicPrefix, topic)))
	}
	broker, err := embedded.StartKafka(embedded.KafkaConfig{Addr: "127.0.0.1:0", Partitions: host.DefaultPartitions, Topics: topics})
	require.NoError(t, err)
	t.Cleanup(broker.Close)
	o := &observed{dataDir: t.TempDir(), broker: broker}
	all := map[string]string{"BATON_DATA_DIR": o.dataDir, "BATON_GATEWAY_ADDR": "127.0.0.1:0", "BATON_LOG_LEVEL": "error",
		"BATON_KAFKA_BROKERS": strings.Join(broker.Brokers(), ",")}
	maps.Copy(all, vars)
	o.baton = start(t, all)
	return o
}

// assertNoSecretAtRest fails for each of values found in a message of the broker or in a
// file of the data directory, before and after a stop (which checkpoints the store's
// write-ahead log into its files). The messages must hold inMessages and the files
// inFiles, to show they were read.
func (o *observed) assertNoSecretAtRest(t *testing.T, inMessages, inFiles string, values map[string]string) {
	t.Helper()
	messages := readTopics(t, o.broker.Brokers()[0])
	assert.Contains(t, string(messages), inMessages, "the messages were read")
	assertNoSecret(t, "the broker's messages", messages, values)
	files := readFiles(t, o.dataDir)
	assert.Contains(t, string(files), inFiles, "the database files were read")
	assertNoSecret(t, "the data directory's files", files, values)
	require.NoError(t, o.stop())
	assertNoSecret(t, "the data directory's files after a stop", readFiles(t, o.dataDir), values)
}

// prop is a setwfproperty task setting output to value, after task after.
func prop(name, output, value, after string) map[string]any {
	return map[string]any{"name": name, "type": "setwfproperty", "dependencies": []any{map[string]any{"taskRef": after}},
		"params": []any{map[string]any{"name": "output", "value": output}, map[string]any{"name": "value", "value": value}}}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// assertNoSecret fails for each secret value found in data, as it is or in base64.
func assertNoSecret(t *testing.T, where string, data []byte, values map[string]string) {
	t.Helper()
	for kind, v := range values {
		forms := map[string]string{"clear": v}
		for name, enc := range map[string]*base64.Encoding{"base64": base64.StdEncoding, "base64url": base64.RawURLEncoding} {
			forms[name] = strings.TrimRight(enc.EncodeToString([]byte(v)), "=")
		}
		for form, s := range forms {
			assert.NotContains(t, string(data), s, "%s hold the %s secret (%s)", where, kind, form)
		}
	}
}

// readAll answers the body of a GET as token.
func readAll(t *testing.T, b *baton, path, token string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, b.url+path, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode, "%s: %s", path, raw)
	return string(raw)
}

// readFiles concatenates every file under dir: the embedded database's SQLite files with
// their write-ahead logs, and whatever else is kept there.
func readFiles(t *testing.T, dir string) []byte {
	t.Helper()
	var all []byte
	n := 0
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // a journal that went meanwhile
		}
		if strings.HasSuffix(path, ".sqlite") || strings.HasSuffix(path, "-wal") {
			n++
		}
		all = append(all, raw...)
		return err
	}))
	require.NotZero(t, n, "no database files under %s", dir)
	return all
}

// readTopics reads every message of every topic of the broker, from the first to the
// last, keys, headers and values.
func readTopics(t *testing.T, addr string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := kafka.DialContext(ctx, "tcp", addr)
	require.NoError(t, err)
	partitions, err := conn.ReadPartitions()
	_ = conn.Close()
	require.NoError(t, err)
	var all []byte
	for _, p := range partitions {
		leader, err := kafka.DialLeader(ctx, "tcp", addr, p.Topic, p.ID)
		require.NoError(t, err)
		first, last, err := leader.ReadOffsets()
		_ = leader.Close()
		require.NoError(t, err)
		if last <= first {
			continue
		}
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: []string{addr}, Topic: p.Topic, Partition: p.ID, MaxWait: 50 * time.Millisecond})
		require.NoError(t, r.SetOffset(first))
		for next := first; next < last; {
			m, err := r.ReadMessage(ctx)
			require.NoError(t, err, "%s/%d at %d of %d", p.Topic, p.ID, next, last)
			all = append(all, m.Key...)
			all = append(all, m.Value...)
			for _, h := range m.Headers {
				all = append(all, h.Value...)
			}
			next = m.Offset + 1
		}
		require.NoError(t, r.Close())
	}
	return all
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	require.NoError(t, err)
	return string(raw)
}
