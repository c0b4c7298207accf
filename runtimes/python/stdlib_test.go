package python_test

import (
	"os"
	"path/filepath"
	"testing"
)

// TestUTF8: file names, file contents and the environment are UTF-8, as in
// CPython's UTF-8 mode.
func TestUTF8(t *testing.T) {
	inst, root := newInstance(t)
	runCells(t, inst, []cellCase{
		{name: "encodings", code: "import sys, locale\n(sys.getfilesystemencoding(), sys.flags.utf8_mode, locale.getpreferredencoding(False))", result: "('utf-8', 1, 'utf-8')"},
		{name: "open a non-ASCII name", code: "with open('café.txt', 'w') as f:\n    f.write('naïve ü €')\nopen('café.txt').read()", result: "'naïve ü €'"},
		{name: "listdir", code: "import os\n'café.txt' in os.listdir('.')", result: "True"},
		{name: "default text encoding", code: "open('café.txt').encoding.lower().replace('-', '')", result: "'utf8'"},
	})
	b, err := os.ReadFile(filepath.Join(root, "café.txt"))
	if err != nil || string(b) != "naïve ü €" {
		t.Fatalf("host sees %q, %v", b, err)
	}
}

// TestZoneInfo: the IANA tz database ships in the stdlib zip as tzdata.
func TestZoneInfo(t *testing.T) {
	inst, _ := newInstance(t)
	runCells(t, inst, []cellCase{
		{name: "new york", code: "from zoneinfo import ZoneInfo\nfrom datetime import datetime\ndatetime(2024, 7, 1, 12, tzinfo=ZoneInfo('America/New_York')).isoformat()", result: "'2024-07-01T12:00:00-04:00'"},
		{name: "winter and a link", code: "datetime(2024, 1, 1, tzinfo=ZoneInfo('US/Eastern')).tzname()", result: "'EST'"},
		{name: "convert", code: "datetime(2024, 3, 31, 1, 30, tzinfo=ZoneInfo('UTC')).astimezone(ZoneInfo('Europe/Paris')).isoformat()", result: "'2024-03-31T03:30:00+02:00'"},
		{name: "available", code: "import zoneinfo\nz = zoneinfo.available_timezones()\n('Asia/Kolkata' in z, len(z) > 400)", result: "(True, True)"},
		{name: "version", code: "import tzdata\ntzdata.IANA_VERSION[:2]", result: "'20'"},
		{name: "unknown key", code: "ZoneInfo('Mars/Olympus')", failed: true, contains: []string{"ZoneInfoNotFoundError"}},
	})
}
