// Command gateway serves Baton's public API, proxying each path to its owning service.
package main

import (
	"github.com/baton-flow/baton/gateway"
	"github.com/baton-flow/baton/libs/host"
)

func main() { host.Main("gateway", host.Options{NoMongo: true, NoKafka: true}, gateway.Build) }
