package secret_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/svcrun/svc/internal/secret"
	"github.com/zalando/go-keyring"
	"golang.org/x/crypto/chacha20poly1305"
)

func testKey(seed byte) []byte {
	key := make([]byte, secret.KeySize)
	for i := range key {
		key[i] = seed + byte(i)
	}
	return key
}

func newBox(t testing.TB, key []byte) *secret.Box {
	t.Helper()
	b, err := secret.NewBox(key)
	if err != nil {
		t.Fatalf("NewBox: got %v; want nil", err)
	}
	return b
}

func TestNewBoxKeyLength(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 16, 31, 33, 64} {
		if _, err := secret.NewBox(make([]byte, n)); err == nil {
			t.Errorf("NewBox(%d bytes): got nil error; want one", n)
		}
	}
	if _, err := secret.NewBox(make([]byte, 32)); err != nil {
		t.Errorf("NewBox(32 bytes): got %v; want nil", err)
	}
}

func TestBoxOpen(t *testing.T) {
	t.Parallel()
	box := newBox(t, testKey(1))
	plain := []byte("sk-live-0123456789")
	sealed := box.Seal("openai", plain)
	flip := func(i int) []byte {
		c := bytes.Clone(sealed)
		c[i] ^= 0x01
		return c
	}
	tests := []struct {
		name   string
		box    *secret.Box
		id     string
		sealed []byte
		ok     bool
	}{
		{"round trip", box, "openai", sealed, true},
		{"same key, new box", newBox(t, testKey(1)), "openai", sealed, true},
		{"wrong id", box, "anthropic", sealed, false},
		{"id prefix", box, "open", sealed, false},
		{"wrong key", newBox(t, testKey(2)), "openai", sealed, false},
		{"tampered nonce", box, "openai", flip(0), false},
		{"tampered ciphertext", box, "openai", flip(24), false},
		{"tampered tag", box, "openai", flip(len(sealed) - 1), false},
		{"truncated", box, "openai", sealed[:len(sealed)-1], false},
		{"extended", box, "openai", append(bytes.Clone(sealed), 0), false},
		{"nonce only", box, "openai", sealed[:24], false},
		{"empty", box, "openai", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := tt.box.Open(tt.id, tt.sealed)
			if tt.ok {
				if err != nil || !bytes.Equal(got, plain) {
					t.Errorf("Open = %q, %v; want %q, nil", got, err, plain)
				}
				return
			}
			if err == nil {
				t.Errorf("Open = %q, nil; want an error", got)
			}
			if err != nil && strings.Contains(err.Error(), string(plain)) {
				t.Errorf("Open error %q contains the plaintext", err)
			}
		})
	}
}

func TestBoxSealLayout(t *testing.T) {
	t.Parallel()
	box := newBox(t, testKey(1))
	for _, plain := range [][]byte{nil, []byte("x"), bytes.Repeat([]byte("s"), 65536)} {
		a, b := box.Seal("id", plain), box.Seal("id", plain)
		if got, want := len(a), 24+len(plain)+16; got != want {
			t.Errorf("len(Seal(%d bytes)) = %d; want %d", len(plain), got, want)
		}
		if bytes.Equal(a, b) {
			t.Errorf("two seals of %d bytes are equal; want them to differ", len(plain))
		}
		if bytes.Equal(a[:24], b[:24]) {
			t.Errorf("two seals share the nonce %x; want fresh nonces", a[:24])
		}
		if len(plain) > 0 && bytes.Contains(a, plain) {
			t.Errorf("Seal output contains the plaintext")
		}
		for _, c := range [][]byte{a, b} {
			got, err := box.Open("id", c)
			if err != nil || !bytes.Equal(got, plain) {
				t.Errorf("Open(Seal(%d bytes)) = %d bytes, %v; want the plaintext, nil", len(plain), len(got), err)
			}
		}
	}
}

// fakeKeyring is a Keyring whose Get and Set can fail.
type fakeKeyring struct {
	getErr, setErr error

	mu   sync.Mutex
	data map[string]string // "service\x00user" -> password
	sets int
}

func (f *fakeKeyring) Get(service, user string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.getErr != nil {
		return "", f.getErr
	}
	v, ok := f.data[service+"\x00"+user]
	if !ok {
		return "", fmt.Errorf("fake: %w", keyring.ErrNotFound)
	}
	return v, nil
}

func (f *fakeKeyring) Set(service, user, password string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sets++
	if f.setErr != nil {
		return f.setErr
	}
	if f.data == nil {
		f.data = map[string]string{}
	}
	f.data[service+"\x00"+user] = password
	return nil
}

func writeKeyFile(t *testing.T, dir string, content []byte, perm os.FileMode) string {
	t.Helper()
	file := filepath.Join(dir, secret.KeyFileName)
	if err := os.WriteFile(file, content, perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(file, perm); err != nil { // WriteFile's perm is subject to umask
		t.Fatal(err)
	}
	return file
}

func encoded(key []byte) []byte {
	return []byte(base64.StdEncoding.EncodeToString(key) + "\n")
}

// checkWarnings fails if a warning shows the key in any form.
func checkWarnings(t *testing.T, warnings []string, key []byte) {
	t.Helper()
	for _, w := range warnings {
		for _, form := range []string{string(key), base64.StdEncoding.EncodeToString(key), fmt.Sprintf("%x", key), fmt.Sprint(key)} {
			if strings.Contains(w, form) {
				t.Errorf("warning %q contains the key", w)
			}
		}
	}
}

func TestLoadKeyFileCreatedAndReused(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data", "svc") // does not exist yet
	key, warnings, err := secret.LoadKey(secret.KeyOptions{DataDir: dir})
	if err != nil || len(warnings) != 0 || len(key) != 32 {
		t.Fatalf("first LoadKey = %d bytes, %q, %v; want 32 bytes, no warnings, nil", len(key), warnings, err)
	}
	file := filepath.Join(dir, secret.KeyFileName)
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" {
		if got, want := fi.Mode().Perm(), os.FileMode(0o600); got != want {
			t.Errorf("key file mode = %v; want %v", got, want)
		}
	}
	if content, _ := os.ReadFile(file); !bytes.Equal(content, encoded(key)) {
		t.Errorf("key file holds %q; want the base64 key and a newline", content)
	}
	if tmps, _ := filepath.Glob(filepath.Join(dir, "*tmp*")); len(tmps) != 0 {
		t.Errorf("temporary files left behind: got %v; want none", tmps)
	}

	again, warnings, err := secret.LoadKey(secret.KeyOptions{DataDir: dir, HasCredentials: true})
	if err != nil || len(warnings) != 0 || !bytes.Equal(again, key) {
		t.Errorf("second LoadKey = %x, %q, %v; want the first key, no warnings, nil", again, warnings, err)
	}
}

func TestLoadKeyConcurrentCreate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const n = 8
	keys := make([][]byte, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { keys[i], _, errs[i] = secret.LoadKey(secret.KeyOptions{DataDir: dir}) })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || !bytes.Equal(keys[i], keys[0]) {
			t.Errorf("LoadKey #%d = %x, %v; want %x, nil", i, keys[i], errs[i], keys[0])
		}
	}
}

func TestLoadKeyMissingWithCredentials(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		kr   *fakeKeyring // nil: no --keychain
	}{
		{"file", nil},
		{"keychain, not in keyring", &fakeKeyring{}},
		{"keychain, keyring unavailable", &fakeKeyring{getErr: errors.New("dbus: no session bus")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			opts := secret.KeyOptions{DataDir: dir, HasCredentials: true}
			if tt.kr != nil {
				opts.Keychain, opts.Keyring = true, tt.kr
			}
			key, _, err := secret.LoadKey(opts)
			if !errors.Is(err, secret.ErrNoKey) {
				t.Fatalf("LoadKey = %x, %v; want an error wrapping ErrNoKey", key, err)
			}
			file := filepath.Join(dir, secret.KeyFileName)
			if !strings.Contains(err.Error(), file) {
				t.Errorf("error %q does not name %s", err, file)
			}
			if _, err := os.Stat(file); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("Stat(key file) = %v; want not exist (no new key)", err)
			}
			if tt.kr != nil && tt.kr.sets != 0 {
				t.Errorf("keyring Set calls = %d; want 0", tt.kr.sets)
			}
		})
	}
}

func TestLoadKeyBadFile(t *testing.T) {
	t.Parallel()
	good := encoded(testKey(7))
	tests := []struct {
		name    string
		content []byte
		perm    os.FileMode
		dir     bool // make the key file a directory
		unix    bool // only on Unix
		want    string
	}{
		{name: "empty", content: nil, perm: 0o600, want: "bytes; want 32"},
		{name: "short", content: encoded(testKey(7)[:16]), perm: 0o600, want: "16 bytes; want 32"},
		{name: "long", content: encoded(append(testKey(7), 0)), perm: 0o600, want: "33 bytes; want 32"},
		{name: "not base64", content: []byte("not a key at all!\n"), perm: 0o600, want: "not base64"},
		{name: "raw bytes", content: testKey(7), perm: 0o600, want: "not"},
		{name: "truncated base64", content: good[:21], perm: 0o600, want: "not base64"},
		{name: "huge", content: bytes.Repeat([]byte("A"), 4096), perm: 0o600, want: "over"},
		{name: "group readable", content: good, perm: 0o640, unix: true, want: "permissions 0640"},
		{name: "world readable", content: good, perm: 0o604, unix: true, want: "permissions 0604"},
		{name: "executable", content: good, perm: 0o700, unix: true, want: "permissions 0700"},
		{name: "directory", dir: true, want: "not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.unix && runtime.GOOS == "windows" {
				t.Skip("file permissions are not checked on Windows")
			}
			dir := t.TempDir()
			file := filepath.Join(dir, secret.KeyFileName)
			if tt.dir {
				if err := os.Mkdir(file, 0o700); err != nil {
					t.Fatal(err)
				}
			} else {
				writeKeyFile(t, dir, tt.content, tt.perm)
			}
			for _, keychain := range []bool{false, true} {
				// With --keychain and no keyring entry the same file is read.
				key, _, err := secret.LoadKey(secret.KeyOptions{DataDir: dir, Keychain: keychain, Keyring: &fakeKeyring{}})
				if err == nil {
					t.Fatalf("LoadKey(keychain=%v) = %x, nil; want an error", keychain, key)
				}
				if !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("LoadKey(keychain=%v) error = %q; want it to name %s and say %q", keychain, err, file, tt.want)
				}
				if errors.Is(err, secret.ErrNoKey) {
					t.Errorf("LoadKey(keychain=%v) error %q wraps ErrNoKey; want a different error", keychain, err)
				}
			}
		})
	}
}

func TestLoadKeyGoodFileVariants(t *testing.T) {
	t.Parallel()
	key := testKey(9)
	b64 := base64.StdEncoding.EncodeToString(key)
	tests := []struct {
		name    string
		content string
		perm    os.FileMode
	}{
		{"newline", b64 + "\n", 0o600},
		{"no newline", b64, 0o600},
		{"crlf", b64 + "\r\n", 0o600},
		{"read only", b64 + "\n", 0o400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeKeyFile(t, dir, []byte(tt.content), tt.perm)
			got, warnings, err := secret.LoadKey(secret.KeyOptions{DataDir: dir, HasCredentials: true})
			if err != nil || len(warnings) != 0 || !bytes.Equal(got, key) {
				t.Errorf("LoadKey = %x, %q, %v; want %x, no warnings, nil", got, warnings, err, key)
			}
		})
	}
}

func TestLoadKeyNoDataDir(t *testing.T) {
	t.Parallel()
	for _, keychain := range []bool{false, true} {
		if _, _, err := secret.LoadKey(secret.KeyOptions{Keychain: keychain, Keyring: &fakeKeyring{}}); err == nil {
			t.Errorf("LoadKey(no data dir, keychain=%v): got nil error; want one", keychain)
		}
	}
}

func TestLoadKeyKeychain(t *testing.T) {
	t.Parallel()
	unavailable := errors.New("dbus: the name org.freedesktop.secrets was not provided")
	fileKey, ringKey := testKey(3), testKey(5)
	tests := []struct {
		name     string
		kr       *fakeKeyring
		inRing   []byte // key stored in the keyring before LoadKey
		inFile   []byte // key stored in the file before LoadKey
		want     []byte // nil: a new key
		wantFile bool   // the key file holds the returned key afterwards
		wantRing bool   // the keyring holds the returned key afterwards
		warning  []string
	}{
		{name: "in keyring", kr: &fakeKeyring{}, inRing: ringKey, want: ringKey, wantRing: true},
		{name: "keyring wins over file", kr: &fakeKeyring{}, inRing: ringKey, inFile: fileKey, want: ringKey, wantRing: true},
		{name: "only in file", kr: &fakeKeyring{}, inFile: fileKey, want: fileKey, wantFile: true},
		{name: "new key goes to keyring", kr: &fakeKeyring{}, wantRing: true},
		{name: "keyring Set fails", kr: &fakeKeyring{setErr: errors.New("collection is locked")}, wantFile: true,
			warning: []string{"cannot store the credential key in the OS keyring", "collection is locked", "kept in"}},
		{name: "keyring unavailable, new key", kr: &fakeKeyring{getErr: unavailable}, wantFile: true,
			warning: []string{"keyring unavailable", unavailable.Error(), "kept in"}},
		{name: "keyring unavailable, file key", kr: &fakeKeyring{getErr: unavailable}, inFile: fileKey, want: fileKey, wantFile: true,
			warning: []string{"keyring unavailable", "kept in"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			file := filepath.Join(dir, secret.KeyFileName)
			if tt.inRing != nil {
				tt.kr.data = map[string]string{"svc\x00" + dir: base64.StdEncoding.EncodeToString(tt.inRing)}
			}
			if tt.inFile != nil {
				writeKeyFile(t, dir, encoded(tt.inFile), 0o600)
			}
			key, warnings, err := secret.LoadKey(secret.KeyOptions{DataDir: dir, Keychain: true, Keyring: tt.kr})
			if err != nil {
				t.Fatalf("LoadKey: got %v; want nil", err)
			}
			if len(key) != 32 || tt.want != nil && !bytes.Equal(key, tt.want) {
				t.Errorf("key = %x; want %x", key, tt.want)
			}
			checkWarnings(t, warnings, key)
			if tt.warning == nil && len(warnings) != 0 {
				t.Errorf("warnings = %q; want none", warnings)
			}
			if tt.warning != nil {
				if len(warnings) != 1 {
					t.Fatalf("warnings = %q; want one", warnings)
				}
				for _, part := range append(tt.warning, file) {
					if !strings.Contains(warnings[0], part) {
						t.Errorf("warning %q; want it to contain %q", warnings[0], part)
					}
				}
			}
			content, err := os.ReadFile(file)
			if got := err == nil && bytes.Equal(content, encoded(key)); got != tt.wantFile {
				t.Errorf("key file holds the key: got %v (%v); want %v", got, err, tt.wantFile)
			}
			stored, err := (&fakeKeyring{data: tt.kr.data}).Get("svc", dir)
			if got := err == nil && stored == base64.StdEncoding.EncodeToString(key); got != tt.wantRing {
				t.Errorf("keyring holds the key: got %v (%v); want %v", got, err, tt.wantRing)
			}

			// A restart finds the same key, now with credentials stored.
			again, _, err := secret.LoadKey(secret.KeyOptions{DataDir: dir, Keychain: true, Keyring: tt.kr, HasCredentials: true})
			if err != nil || !bytes.Equal(again, key) {
				t.Errorf("second LoadKey = %x, %v; want %x, nil", again, err, key)
			}
		})
	}
}

func TestLoadKeyKeychainCorruptEntry(t *testing.T) {
	t.Parallel()
	for _, value := range []string{"", "not base64!", base64.StdEncoding.EncodeToString(testKey(1)[:31])} {
		dir := t.TempDir()
		writeKeyFile(t, dir, encoded(testKey(3)), 0o600)
		kr := &fakeKeyring{data: map[string]string{"svc\x00" + dir: value}}
		key, _, err := secret.LoadKey(secret.KeyOptions{DataDir: dir, Keychain: true, Keyring: kr})
		if err == nil || !strings.Contains(err.Error(), "keyring") {
			t.Errorf("LoadKey(keyring entry %q) = %x, %v; want an error about the keyring entry", value, key, err)
		}
	}
}

// TestLoadKeyRelativeDir changes the working directory, so it cannot run in
// parallel.
func TestLoadKeyRelativeDir(t *testing.T) {
	base := t.TempDir()
	t.Chdir(base)
	kr := &fakeKeyring{}
	key, _, err := secret.LoadKey(secret.KeyOptions{DataDir: "./data/", Keychain: true, Keyring: kr})
	if err != nil {
		t.Fatalf("LoadKey: got %v; want nil", err)
	}
	abs, err := filepath.Abs("data")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := kr.data["svc\x00"+abs], base64.StdEncoding.EncodeToString(key); got != want {
		t.Errorf("keyring entry for user %s = %q; want %q", abs, got, want)
	}
	fileKey, _, err := secret.LoadKey(secret.KeyOptions{DataDir: "data"})
	if err != nil {
		t.Fatalf("LoadKey(file): got %v; want nil", err)
	}
	if _, err := os.Stat(filepath.Join(base, "data", secret.KeyFileName)); err != nil {
		t.Errorf("Stat(key file under the relative dir): got %v; want nil", err)
	}
	if bytes.Equal(fileKey, key) {
		t.Errorf("file key equals the keyring key; want a separate new key")
	}
}

// TestLoadKeyGoKeyringMock runs LoadKey against OSKeyring with go-keyring's
// in-memory mock. The mock replaces a package-level provider and has no
// locking, so this test does not run in parallel; the parallel tests use
// fakeKeyring and never touch the OS keyring.
func TestLoadKeyGoKeyringMock(t *testing.T) {
	keyring.MockInit()
	dir := t.TempDir()
	file := filepath.Join(dir, secret.KeyFileName)

	if _, _, err := secret.LoadKey(secret.KeyOptions{DataDir: dir, Keychain: true, HasCredentials: true}); !errors.Is(err, secret.ErrNoKey) {
		t.Fatalf("LoadKey(empty keyring, credentials) error: got %v; want ErrNoKey", err)
	}
	key, warnings, err := secret.LoadKey(secret.KeyOptions{DataDir: dir, Keychain: true})
	if err != nil || len(warnings) != 0 {
		t.Fatalf("LoadKey(empty keyring) = %q, %v; want no warnings, nil", warnings, err)
	}
	if stored, err := keyring.Get("svc", dir); err != nil || stored != base64.StdEncoding.EncodeToString(key) {
		t.Errorf("keyring.Get = %q, %v; want the base64 key, nil", stored, err)
	}
	if _, err := os.Stat(file); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat(key file) = %v; want not exist (the key is in the keyring)", err)
	}
	again, warnings, err := secret.LoadKey(secret.KeyOptions{DataDir: dir, Keychain: true, HasCredentials: true})
	if err != nil || len(warnings) != 0 || !bytes.Equal(again, key) {
		t.Errorf("second LoadKey = %x, %q, %v; want %x, no warnings, nil", again, warnings, err, key)
	}

	keyring.MockInitWithError(errors.New("dbus: no session bus"))
	dir2 := t.TempDir()
	key2, warnings, err := secret.LoadKey(secret.KeyOptions{DataDir: dir2, Keychain: true})
	if err != nil {
		t.Fatalf("LoadKey(keyring error): got %v; want nil", err)
	}
	checkWarnings(t, warnings, key2)
	file2 := filepath.Join(dir2, secret.KeyFileName)
	if len(warnings) != 1 || !strings.Contains(warnings[0], "unavailable") || !strings.Contains(warnings[0], file2) {
		t.Errorf("warnings = %q; want one saying the keyring is unavailable and naming %s", warnings, file2)
	}
	fromFile, _, err := secret.LoadKey(secret.KeyOptions{DataDir: dir2, HasCredentials: true})
	if err != nil || !bytes.Equal(fromFile, key2) {
		t.Errorf("LoadKey(file) = %x, %v; want %x, nil", fromFile, err, key2)
	}
}

// sealFixed seals like Box.Seal but with a fixed nonce, so fuzz seeds are the
// same in every fuzzing process (and the wire format is checked against the
// AEAD used directly).
func sealFixed(t testing.TB, key []byte, nonce byte, id, plain string) []byte {
	t.Helper()
	aead, err := chacha20poly1305.NewX(key)
	if err != nil {
		t.Fatal(err)
	}
	n := bytes.Repeat([]byte{nonce}, chacha20poly1305.NonceSizeX)
	return aead.Seal(n, n, []byte(plain), []byte(id))
}

// FuzzOpen checks that Open never panics and accepts only what the key sealed.
func FuzzOpen(f *testing.F) {
	key := testKey(11)
	box := newBox(f, key)
	type sealed struct{ id, data string }
	valid := map[sealed]string{}
	for i, s := range []struct{ id, plain string }{{"openai", "sk-123"}, {"", ""}, {"x", strings.Repeat("p", 300)}} {
		c := sealFixed(f, key, byte(i), s.id, s.plain)
		valid[sealed{s.id, string(c)}] = s.plain
		f.Add(s.id, c)
		f.Add(s.id+"x", c)
		f.Add(s.id, c[:len(c)-1])
	}
	f.Add("id", []byte{})
	f.Add("id", make([]byte, 40))
	f.Add("id", make([]byte, 41))
	f.Fuzz(func(t *testing.T, id string, data []byte) {
		got, err := box.Open(id, data)
		want, ok := valid[sealed{id, string(data)}]
		switch {
		case ok && (err != nil || string(got) != want):
			t.Errorf("Open(sealed) = %q, %v; want %q, nil", got, err, want)
		case !ok && err == nil:
			t.Errorf("Open(%q, %x) = %q, nil; want an error", id, data, got)
		}
	})
}
