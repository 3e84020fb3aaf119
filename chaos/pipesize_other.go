//go:build !linux

package chaos

import (
	"errors"
	"os"
)

func shrinkPipe(*os.File) (int, error) {
	return 0, errors.New("shrinking a pipe needs Linux")
}
