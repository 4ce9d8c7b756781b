package executor

// Name names the process executor in the runner's metrics.
func (p *Process) Name() string { return "process" }

// Name names the Docker executor in the runner's metrics.
func (d *Docker) Name() string { return "docker" }
