package deadcode

import (
	"testing"

	"github.com/orch/orch/test/testutil"
)

func TestMain(m *testing.M) { testutil.Main(m) }
