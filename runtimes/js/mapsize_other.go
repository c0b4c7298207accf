//go:build !go1.26 || go1.27

package js

import "reflect"

// mapSize reads a map's size only on the Go version whose maps it knows
// (mapsize.go); elsewhere the walk estimates it from the map's length.
func mapSize(reflect.Value) (int64, bool) { return 0, false }
