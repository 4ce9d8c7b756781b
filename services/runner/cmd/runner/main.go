// Command runner serves Baton's runner.
package main

import (
	"github.com/baton-flow/baton/libs/host"
	"github.com/baton-flow/baton/services/runner"
)

func main() { host.Main(runner.Name, host.Options{NoMongo: true}, runner.Build) }
