package prelude

import (
	"archive/zip"
	"bytes"
	"embed"
	"io/fs"
	"time"
)

//go:embed python/*.py
var python embed.FS

// PythonZip returns the Python prelude as a zip of its .py files, for the
// guest's sys.path (mounted at /usr/local/lib/wasmeval/prelude.zip).
func PythonZip() ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	files, err := fs.Glob(python, "python/*.py")
	if err != nil {
		return nil, err
	}
	for _, name := range files {
		src, err := python.ReadFile(name)
		if err != nil {
			return nil, err
		}
		// A fixed date keeps the zip, and so the guest snapshot, reproducible.
		w, err := zw.CreateHeader(&zip.FileHeader{
			Name:     name[len("python/"):],
			Method:   zip.Store,
			Modified: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC),
		})
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(src); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
