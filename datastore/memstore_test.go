package datastore_test

import (
	"testing"

	"github.com/orch/orch/datastore"
	"github.com/orch/orch/datastore/storetest"
)

func TestMemStoreContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) datastore.Store {
		return datastore.NewMemStore(storetest.HistorySize)
	})
}
