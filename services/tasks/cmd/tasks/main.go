// Command tasks serves Baton's tasks service.
package main

import (
	"github.com/baton-flow/baton/libs/host"
	"github.com/baton-flow/baton/services/tasks"
)

func main() { host.Main(tasks.Name, host.Options{}, tasks.Build) }
