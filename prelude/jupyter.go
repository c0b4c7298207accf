package prelude

import "fmt"

// PythonFile returns the source of one file of the Python prelude
// (_wasmeval_helpers.py, _wasmeval_jupyter.py), for the native Jupyter
// backend, which sends it to its kernel as code instead of mounting the
// prelude's zip.
func PythonFile(name string) ([]byte, error) {
	b, err := python.ReadFile("python/" + name)
	if err != nil {
		return nil, fmt.Errorf("prelude: no Python file %s: %w", name, err)
	}
	return b, nil
}
