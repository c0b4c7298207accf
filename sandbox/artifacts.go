package sandbox

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
)

// maxStoredBytes caps the full outputs one session keeps; past it the
// oldest are dropped.
const maxStoredBytes = 64 << 20

// ErrOutputNotFound is returned (wrapped) by Session.Output for an id the
// session does not hold: never made, or dropped to stay under the cap.
var ErrOutputNotFound = errors.New("sandbox: output not found")

// outputStore keeps the full text of cut outputs, oldest first.
type outputStore struct {
	mu    sync.Mutex
	next  int
	order []string
	texts map[string]storedOutput
	size  int
}

// storedOutput is a text as the collector kept it, and a note to close it.
type storedOutput struct {
	body []byte
	note string
}

func (o storedOutput) size() int { return len(o.body) + len(o.note) }

// add stores a text, taking ownership of body, and returns its id. It
// drops the oldest texts to stay under maxStoredBytes.
func (s *outputStore) add(body []byte, note string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.texts == nil {
		s.texts = make(map[string]storedOutput)
	}
	s.next++
	id := "out-" + strconv.Itoa(s.next)
	out := storedOutput{body, note}
	for s.size+out.size() > maxStoredBytes && len(s.order) > 0 {
		old := s.order[0]
		s.order = s.order[1:]
		s.size -= s.texts[old].size()
		delete(s.texts, old)
	}
	s.order = append(s.order, id)
	s.texts[id] = out
	s.size += out.size()
	return id
}

// nextID returns the id the next add will use.
func (s *outputStore) nextID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return "out-" + strconv.Itoa(s.next+1)
}

func (s *outputStore) get(id string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out, ok := s.texts[id]
	if !ok {
		return "", fmt.Errorf("%w: %s (a session keeps its last %d MiB of cut outputs)", ErrOutputNotFound, quote(id), maxStoredBytes>>20)
	}
	return string(out.body) + out.note, nil
}

// guestGet is get for the guest's output helper: its error is worded for
// the guest, which sees it after "output('ID'): ".
func (s *outputStore) guestGet(id string) (string, error) {
	text, err := s.get(id)
	if err != nil {
		return "", fmt.Errorf("this session holds no output with this id; ids like 'out-1' come from a cut output's marker and meta.truncated[].outputId, and a session keeps only its last %d MiB of cut outputs", maxStoredBytes>>20)
	}
	return text, nil
}
