//go:build tools

// Package consulagent pins the Consul agent that tests build into .tools/bin (make tools).
package consulagent

import _ "github.com/hashicorp/consul"
