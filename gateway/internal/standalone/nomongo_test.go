package standalone_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/gateway/internal/standalone"
	"github.com/baton-flow/baton/libs/embedded"
)

// steps records the steps of a start, told from several goroutines.
type steps struct {
	mu   sync.Mutex
	seen []standalone.Step
}

func (s *steps) tell(step standalone.Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = append(s.seen, step)
}

// of returns the steps of kind k.
func (s *steps) of(k standalone.StepKind) []standalone.Step {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []standalone.Step
	for _, st := range s.seen {
		if st.Kind == k {
			out = append(out, st)
		}
	}
	return out
}

// readiness asks every service the start told ready for its /ready, and returns each
// one's checks by service.
func (s *steps) readiness(t *testing.T) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, st := range s.of(standalone.StepServiceReady) {
		resp, err := http.Get("http://" + st.Addr + "/ready")
		require.NoError(t, err)
		var body struct {
			Status string         `json:"status"`
			Checks map[string]any `json:"checks"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
		require.NoError(t, resp.Body.Close())
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %v", st.Detail, body)
		require.Equal(t, "UP", body.Status, st.Detail)
		out[st.Detail] = body.Checks
	}
	return out
}

// announcedPorts are the ports the start said it listens on: every service's, the
// broker's, and the operators' listener's.
func (s *steps) announcedPorts(t *testing.T, b *baton) map[int]bool {
	t.Helper()
	ports := map[int]bool{}
	add := func(addr string) {
		_, p, err := net.SplitHostPort(addr)
		require.NoError(t, err, addr)
		n, err := strconv.Atoi(p)
		require.NoError(t, err, addr)
		ports[n] = true
	}
	for _, st := range s.of(standalone.StepServiceReady) {
		add(st.Addr)
	}
	for _, st := range s.of(standalone.StepBrokerReady) {
		for _, a := range strings.Split(st.Detail, ",") {
			add(a)
		}
	}
	u, err := url.Parse(b.admin)
	require.NoError(t, err)
	add(u.Host)
	return ports
}

// listeningPorts are the TCP ports this process listens on, read from /proc: the sockets
// among its file descriptors that are in the LISTEN state.
func listeningPorts(t *testing.T) map[int]bool {
	t.Helper()
	inodes := map[string]bool{}
	fds, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	for _, fd := range fds {
		link, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if err == nil && strings.HasPrefix(link, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = true
		}
	}
	ports := map[int]bool{}
	for _, table := range []string{"/proc/self/net/tcp", "/proc/self/net/tcp6"} {
		f, err := os.Open(table)
		if os.IsNotExist(err) {
			continue
		}
		require.NoError(t, err)
		s := bufio.NewScanner(f)
		s.Scan() // the header
		for s.Scan() {
			// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
			fields := strings.Fields(s.Text())
			if len(fields) < 10 || fields[3] != "0A" || !inodes[fields[9]] {
				continue
			}
			_, hexPort, _ := strings.Cut(fields[1], ":")
			port, err := strconv.ParseInt(hexPort, 16, 32)
			require.NoError(t, err, s.Text())
			ports[int(port)] = true
		}
		require.NoError(t, s.Err())
		require.NoError(t, f.Close())
	}
	return ports
}

// runToEnd saves a three-task workflow in a new team and runs it to its end.
func runToEnd(t *testing.T, b *baton, team string) {
	t.Helper()
	code, out := b.call(t, http.MethodPost, "/api/v2/team", b.token, `{"name":"`+team+`"}`)
	require.Equal(t, http.StatusCreated, code, out)
	workflow := `{"name":"pipeline","tasks":[{"name":"start","type":"start"},
		{"name":"build","type":"script","params":[{"name":"script","value":"echo built"}],"dependencies":[{"taskRef":"start"}]},
		{"name":"end","type":"end","dependencies":[{"taskRef":"build"}]}]}`
	// The workflows service learns of the team from its event.
	require.Eventually(t, func() bool {
		code, _ := b.call(t, http.MethodPost, "/api/v2/team/"+team+"/workflow", b.token, workflow)
		return code == http.StatusCreated
	}, 30*time.Second, 20*time.Millisecond)
	runPipeline(t, b, team)
}

// runPipeline runs the team's workflow pipeline to its end.
func runPipeline(t *testing.T, b *baton, team string) {
	t.Helper()
	code, run := b.call(t, http.MethodPost, "/api/v2/team/"+team+"/workflow/pipeline/submit?start=true", b.token, `{}`)
	require.Equal(t, http.StatusCreated, code, run)
	id := run["id"].(string)
	var done map[string]any
	require.Eventually(t, func() bool {
		_, done = b.call(t, http.MethodGet, "/api/v2/team/"+team+"/workflowrun/"+id, b.token, "")
		return done["phase"] == "completed"
	}, 60*time.Second, 50*time.Millisecond)
	assert.Equal(t, "succeeded", done["status"], done)
}

// On a new data directory no service keeps its data in a MongoDB: the process starts no
// embedded MongoDB-wire server (no files of it, no listener beyond those it announced),
// connects to none, no service's /ready checks one, and a run goes through from submit to
// its end.
//
// Not parallel: the process's listeners are told apart from other tests' only when no
// other standalone process runs in the test binary at the same time.
func TestIntegrationNewDataDirectoryStartsNoMongo(t *testing.T) {
	dir := t.TempDir()
	var s steps
	before := listeningPorts(t)
	b := startWith(t, map[string]string{"BATON_DATA_DIR": dir, "BATON_GATEWAY_ADDR": "127.0.0.1:0", "BATON_LOG_LEVEL": "error"},
		standalone.Options{Progress: s.tell})

	assert.Empty(t, s.of(standalone.StepStoreStarting), "the embedded MongoDB is not started")
	own := s.of(standalone.StepOwnDatabases)
	require.Len(t, own, 1)
	assert.Equal(t, []string{"runs", "identity", "tasks", "workflows", "schedules", "integrations"}, own[0].Services)
	connecting := s.of(standalone.StepConnecting)
	require.Len(t, connecting, 1)
	assert.Empty(t, connecting[0].Services, "no service connects to a MongoDB")

	announced := s.announcedPorts(t, b)
	for port := range listeningPorts(t) {
		if !before[port] {
			assert.True(t, announced[port], "port %d listens and was not announced", port)
		}
	}
	ready := s.readiness(t)
	for _, svc := range []string{"identity", "workflows", "tasks", "runs", "runner", "schedules", "integrations", "gateway"} {
		require.Contains(t, ready, svc)
		assert.NotContains(t, ready[svc], "mongo", "%s checks no MongoDB", svc)
	}
	for _, svc := range []string{"identity", "workflows", "tasks", "runs", "schedules", "integrations"} {
		assert.Equal(t, "UP", ready[svc]["sqlite"], "%s checks its own file", svc)
		assert.Equal(t, "UP", ready[svc]["kafka"], "%s checks its broker", svc)
	}

	runToEnd(t, b, "fresh")
	require.NoError(t, b.stop())
	assert.NoDirExists(t, filepath.Join(dir, "mongo"), "nothing of the embedded MongoDB is made")
	for _, svc := range []string{"identity", "workflows", "tasks", "runs", "schedules", "integrations"} {
		assert.FileExists(t, filepath.Join(dir, svc+".db"))
	}
}

// A data directory made by an earlier version, whose embedded MongoDB holds the services'
// data, starts that server again for them, and what they kept there is read: the team,
// its workflow and its run; a new run goes through it. They check it for their
// readiness; a service whose data is not there keeps a file of its own and checks no
// MongoDB.
func TestIntegrationEarlierDataDirectoryStartsItsMongo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	vars := map[string]string{"BATON_DATA_DIR": dir, "BATON_GATEWAY_ADDR": "127.0.0.1:0", "BATON_LOG_LEVEL": "error"}

	// The earlier version: every service on the embedded MongoDB of the data directory.
	m, err := embedded.StartMongo(context.Background(), embedded.MongoConfig{Dir: filepath.Join(dir, "mongo")})
	require.NoError(t, err)
	earlier := map[string]string{"BATON_MONGO_URI": m.URI()}
	for k, v := range vars {
		earlier[k] = v
	}
	b := start(t, earlier)
	runToEnd(t, b, "kept")
	require.NoError(t, b.stop())
	m.Close()
	for _, svc := range []string{"identity", "workflows", "tasks", "runs", "schedules", "integrations"} {
		require.FileExists(t, filepath.Join(dir, "mongo", "baton_"+svc+".sqlite"))
	}
	// The task catalogue, empty, dropped from the embedded MongoDB: the tasks service
	// moves to a file of its own, and only it.
	tasksDB, err := filepath.Glob(filepath.Join(dir, "mongo", "baton_tasks.sqlite*"))
	require.NoError(t, err)
	for _, f := range tasksDB {
		require.NoError(t, os.Remove(f))
	}

	var s steps
	b = startWith(t, vars, standalone.Options{Progress: s.tell})
	own := s.of(standalone.StepOwnDatabases)
	require.Len(t, own, 1)
	assert.Equal(t, []string{"tasks"}, own[0].Services)
	store := s.of(standalone.StepStoreStarting)
	require.Len(t, store, 1, "the embedded MongoDB is started")
	assert.Equal(t, filepath.Join(dir, "mongo"), store[0].Detail)
	onMongo := []string{"runs", "identity", "workflows", "schedules", "integrations"}
	assert.Equal(t, onMongo, store[0].Services)
	ready := s.readiness(t)
	for _, svc := range onMongo {
		assert.Equal(t, "UP", ready[svc]["mongo"], "%s checks the MongoDB it keeps its data in", svc)
		assert.NotContains(t, ready[svc], "sqlite", svc)
	}
	for _, svc := range []string{"tasks", "runner", "gateway"} {
		assert.NotContains(t, ready[svc], "mongo", "%s checks no MongoDB it does not use", svc)
	}
	assert.Equal(t, "UP", ready["tasks"]["sqlite"])

	code, out := b.call(t, http.MethodGet, "/api/v2/team/kept/workflow/pipeline", b.token, "")
	require.Equal(t, http.StatusOK, code, out)
	var runs map[string]any
	code = b.callJSON(t, http.MethodGet, "/api/v2/team/kept/workflowrun/query", b.token, "", &runs)
	require.Equal(t, http.StatusOK, code, runs)
	assert.EqualValues(t, 1, runs["totalElements"], "the run of the earlier version is read: %v", runs)
	_, err = os.Stat(filepath.Join(dir, "runs.db"))
	assert.ErrorIs(t, err, os.ErrNotExist, "the runs stay in the embedded MongoDB")

	runPipeline(t, b, "kept")
	require.NoError(t, b.stop())
}
