package app_test

import (
	"encoding/base64"
	"testing"

	"github.com/baton-flow/baton/libs/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

var base64URL = base64.RawURLEncoding
