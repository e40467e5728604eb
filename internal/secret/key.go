package secret

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/zalando/go-keyring"
)

// KeyFileName is the file in the data directory that holds the credential key
// when the OS keyring does not: one line with the 32-byte key in standard
// base64 (44 characters; the trailing newline is optional), mode 0600.
const KeyFileName = "credential.key"

// keyringService is the keyring service name of the credential key; the
// keyring user is the absolute data directory, so each data directory has its
// own key.
const keyringService = "svc"

// maxKeyFile bounds how much of a key file is read; a real one is 45 bytes.
const maxKeyFile = 1024

// ErrNoKey means credentials are stored but their key cannot be found. The
// server must exit rather than make a new key (spec/server.md section 1
// rule 2), since a new key would make every stored credential unreadable.
var ErrNoKey = errors.New("credentials exist but their encryption key is missing")

// Keyring is the OS keyring seam. Get reports a missing entry with an error
// wrapping keyring.ErrNotFound (github.com/zalando/go-keyring); any other
// error means the keyring is unavailable.
type Keyring interface {
	// Get returns the secret stored for service and user.
	Get(service, user string) (string, error)
	// Set stores password for service and user, replacing any earlier one.
	Set(service, user, password string) error
}

// OSKeyring is the system keyring (Keychain, Secret Service over D-Bus,
// Windows Credential Manager) via github.com/zalando/go-keyring.
var OSKeyring Keyring = osKeyring{}

type osKeyring struct{}

func (osKeyring) Get(service, user string) (string, error) { return keyring.Get(service, user) }

func (osKeyring) Set(service, user, password string) error {
	return keyring.Set(service, user, password)
}

// KeyOptions says where LoadKey looks for the credential key.
type KeyOptions struct {
	// DataDir is the data directory, absolute or relative (made absolute
	// with filepath.Abs). Required. It is created (0700) only when a key file
	// has to be written.
	DataDir string
	// Keychain keeps the key in the OS keyring (--keychain), falling back to
	// the key file with a warning when the keyring is unavailable.
	Keychain bool
	// Keyring is the keyring used when Keychain is set; nil means OSKeyring.
	Keyring Keyring
	// HasCredentials says credentials are already stored. Then a missing key
	// is ErrNoKey instead of a reason to make one.
	HasCredentials bool
}

// LoadKey returns the 32-byte credential key and any warnings to print at
// start-up. Warnings name where the key is kept, never the key.
//
// Without Keychain the key is read from DataDir/credential.key; a file with
// the wrong content, or on Unix with permissions wider than 0600, is refused.
// A missing file is created with a new random key, unless HasCredentials is
// set: then the error wraps ErrNoKey.
//
// With Keychain the key is looked up in the keyring (service "svc", user the
// absolute data directory, value the key in standard base64). When the keyring
// has no entry, an existing key file is used silently; otherwise a new key is
// stored in the keyring (or in the key file, with a warning, if that fails).
// When the keyring is unavailable the key file is used as without Keychain,
// with a warning.
func LoadKey(opts KeyOptions) (key []byte, warnings []string, err error) {
	if opts.DataDir == "" {
		return nil, nil, errors.New("secret: load key: no data directory")
	}
	dir, err := filepath.Abs(opts.DataDir)
	if err != nil {
		return nil, nil, fmt.Errorf("secret: load key: %w", err)
	}
	file := filepath.Join(dir, KeyFileName)
	if !opts.Keychain {
		key, err := fileKey(file, opts.HasCredentials, "")
		return key, nil, err
	}

	kr := opts.Keyring
	if kr == nil {
		kr = OSKeyring
	}
	stored, getErr := kr.Get(keyringService, dir)
	switch {
	case getErr == nil:
		key, err := decodeKey(stored)
		if err != nil {
			return nil, nil, fmt.Errorf("secret: keyring entry %q for %s: %w", keyringService, dir, err)
		}
		return key, nil, nil
	case !errors.Is(getErr, keyring.ErrNotFound):
		key, err := fileKey(file, opts.HasCredentials, "and the OS keyring is unavailable")
		if err != nil {
			return nil, nil, err
		}
		return key, []string{fmt.Sprintf("OS keyring unavailable (%v); the credential key is kept in %s", getErr, file)}, nil
	}

	// The keyring has no entry: a key file from an earlier start wins.
	key, err = readKeyFile(file)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return key, nil, err
	}
	if opts.HasCredentials {
		return nil, nil, fmt.Errorf("secret: %w: not in the OS keyring (service %q, user %s) and %s does not exist", ErrNoKey, keyringService, dir, file)
	}
	key = newKey()
	if err := kr.Set(keyringService, dir, base64.StdEncoding.EncodeToString(key)); err != nil {
		key, err2 := createKeyFile(file, key)
		if err2 != nil {
			return nil, nil, err2
		}
		return key, []string{fmt.Sprintf("cannot store the credential key in the OS keyring (%v); the key is kept in %s", err, file)}, nil
	}
	return key, nil, nil
}

// fileKey reads the key file, or creates it when it is missing and no
// credentials are stored. why explains an ErrNoKey further.
func fileKey(file string, hasCredentials bool, why string) ([]byte, error) {
	key, err := readKeyFile(file)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	if hasCredentials {
		if why != "" {
			why = " " + why
		}
		return nil, fmt.Errorf("secret: %w: %s does not exist%s", ErrNoKey, file, why)
	}
	return createKeyFile(file, newKey())
}

// readKeyFile reads and checks a key file. A missing file gives an error
// wrapping fs.ErrNotExist.
func readKeyFile(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("secret: read key file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("secret: read key file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("secret: key file %s is not a regular file", file)
	}
	if perm := fi.Mode().Perm(); runtime.GOOS != "windows" && perm&^0o600 != 0 {
		return nil, fmt.Errorf("secret: key file %s has permissions %04o; want 0600 or narrower (chmod 600 %s)", file, perm, file)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return nil, fmt.Errorf("secret: read key file: %w", err)
	}
	if len(b) > maxKeyFile {
		return nil, fmt.Errorf("secret: key file %s is not a credential key: over %d bytes", file, maxKeyFile)
	}
	key, err := decodeKey(string(b))
	if err != nil {
		return nil, fmt.Errorf("secret: key file %s is not a credential key: %w", file, err)
	}
	return key, nil
}

// decodeKey decodes a base64 key with optional trailing line break.
func decodeKey(s string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimRight(s, "\r\n"))
	if err != nil {
		return nil, errors.New("not base64")
	}
	if len(key) != KeySize {
		return nil, fmt.Errorf("key is %d bytes; want %d", len(key), KeySize)
	}
	return key, nil
}

func newKey() []byte {
	key := make([]byte, KeySize)
	rand.Read(key) // never fails (crypto/rand, Go 1.24+)
	return key
}

// createKeyFile writes key to file without ever leaving a partial key there:
// it writes and syncs a 0600 temporary file in the same directory, then hard
// links it to file, which fails if file exists (like O_EXCL). If another
// process won the race, its key is returned instead.
func createKeyFile(file string, key []byte) ([]byte, error) {
	dir := filepath.Dir(file)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("secret: create key file: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "."+KeyFileName+".tmp-*") // mode 0600
	if err != nil {
		return nil, fmt.Errorf("secret: create key file: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.WriteString(base64.StdEncoding.EncodeToString(key) + "\n")
	if err == nil {
		err = tmp.Sync()
	}
	if err2 := tmp.Close(); err == nil {
		err = err2
	}
	if err != nil {
		return nil, fmt.Errorf("secret: create key file: %w", err)
	}
	if err := os.Link(tmp.Name(), file); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return readKeyFile(file)
		}
		return nil, fmt.Errorf("secret: create key file: %w", err)
	}
	syncDir(dir)
	return key, nil
}

// syncDir makes a new directory entry durable where the OS allows it.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync() // best effort: not supported on every OS and file system
		d.Close()
	}
}
