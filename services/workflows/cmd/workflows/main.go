// Command workflows serves Baton's workflows service.
package main

import (
	"github.com/baton-flow/baton/libs/host"
	"github.com/baton-flow/baton/services/workflows"
)

func main() { host.Main(workflows.Name, host.Options{}, workflows.Build) }
