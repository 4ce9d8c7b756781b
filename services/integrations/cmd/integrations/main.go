// Command integrations serves Baton's integrations service.
package main

import (
	"github.com/baton-flow/baton/libs/host"
	"github.com/baton-flow/baton/services/integrations"
)

func main() { host.Main(integrations.Name, host.Options{}, integrations.Build) }
