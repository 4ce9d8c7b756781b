module github.com/baton-flow/baton/libs/testkit/consulagent

go 1.25

require github.com/hashicorp/consul v1.20.6

exclude (
	github.com/hashicorp/go-msgpack v1.1.5
	github.com/hashicorp/go-msgpack v1.1.6
)
