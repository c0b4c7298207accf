package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/wasmeval/wasmeval/store"
)

// ListStored describes the sessions of owner as List does, and, with a
// store that can list an owner's records (store.Summarizer), also those
// the manager does not hold: saved before a restart and not used since,
// or held by another node sharing the store. Those are described from
// their records, without loading them: Busy false, ResidentBytes zero,
// LastUsed the time of their last save (or of their making, if later), Languages those with live state
// then. It fails (wrapping ErrStore) only when the store cannot be read.
func (m *Manager) ListStored(ctx context.Context, owner string) ([]SessionInfo, error) {
	infos := m.List(owner)
	sum, ok := m.opts.Store.(store.Summarizer)
	if m.opts.Store == nil || !ok {
		return infos, nil
	}
	stored, err := sum.Summaries(ctx, owner)
	if err != nil {
		return nil, fmt.Errorf("%w: listing the sessions of the store: %w", ErrStore, err)
	}
	held := map[string]bool{}
	for _, in := range infos {
		held[in.ID] = true
	}
	for _, s := range stored {
		if held[s.ID] || s.Owner != owner {
			continue
		}
		var meta persistedMeta
		json.Unmarshal(s.Meta, &meta) // a record that does not decode lists without
		// Never before it was made: a dir store's time of save is its
		// file's mtime, which the kernel reads from a coarse clock up to
		// a tick behind the time.Now that Created took.
		lastUsed := s.Saved
		if lastUsed.Before(meta.Created) {
			lastUsed = meta.Created
		}
		info := SessionInfo{ID: s.ID, Created: meta.Created, LastUsed: lastUsed, FuelUsed: int64(min(s.FuelUsed, 1<<62)), Languages: meta.Languages}
		if info.Languages == nil {
			info.Languages = []string{}
			if s.HasPython {
				info.Languages = []string{"py"}
			}
		}
		if info.Created.IsZero() {
			info.Created = s.Saved
		}
		infos = append(infos, info)
	}
	slices.SortFunc(infos, func(a, b SessionInfo) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return infos, nil
}
