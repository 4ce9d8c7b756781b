// Command runs serves Baton's runs service.
package main

import (
	"github.com/baton-flow/baton/libs/host"
	"github.com/baton-flow/baton/services/runs"
)

func main() { host.Main(runs.Name, host.Options{}, runs.Build) }
