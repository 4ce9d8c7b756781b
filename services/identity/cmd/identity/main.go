// Command identity serves Baton's identity service.
package main

import (
	"github.com/baton-flow/baton/libs/host"
	"github.com/baton-flow/baton/services/identity"
)

func main() { host.Main(identity.Name, host.Options{}, identity.Build) }
