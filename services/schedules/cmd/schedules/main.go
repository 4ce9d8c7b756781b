// Command schedules serves Baton's schedules service.
package main

import (
	"github.com/baton-flow/baton/libs/host"
	"github.com/baton-flow/baton/services/schedules"
)

func main() { host.Main(schedules.Name, host.Options{}, schedules.Build) }
