// Package secret encrypts saved credentials and keeps their key.
//
// LoadKey finds (or, on a first start, creates) the 32-byte credential key in
// the data directory or the OS keyring; Box seals and opens credential secrets
// with that key.
package secret

import (
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"

	"golang.org/x/crypto/chacha20poly1305"
)

// KeySize is the length of a credential key in bytes.
const KeySize = chacha20poly1305.KeySize

// errOpen is the cause of every failed Open; it says nothing about the bytes.
var errOpen = errors.New("ciphertext is corrupt, was sealed for another id or with another key")

// Box seals and opens credential secrets with XChaCha20-Poly1305.
//
// A sealed secret is a random 24-byte nonce followed by the ciphertext and its
// 16-byte tag. The credential id is the additional data, so a ciphertext moved
// to another id fails to open. A Box is safe for concurrent use.
type Box struct {
	aead cipher.AEAD
}

// NewBox returns a Box for a 32-byte key (see LoadKey). The key is copied.
func NewBox(key []byte) (*Box, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("secret: key is %d bytes; want %d", len(key), KeySize)
	}
	aead, err := chacha20poly1305.NewX(key)
	if err != nil {
		return nil, fmt.Errorf("secret: %w", err)
	}
	return &Box{aead: aead}, nil
}

// Seal encrypts plaintext for the credential id. Two seals of the same
// plaintext differ because each draws a fresh random nonce.
func (b *Box) Seal(id string, plaintext []byte) []byte {
	ns := b.aead.NonceSize()
	out := make([]byte, ns, ns+len(plaintext)+b.aead.Overhead())
	rand.Read(out) // never fails (crypto/rand, Go 1.24+)
	return b.aead.Seal(out, out, plaintext, []byte(id))
}

// Open decrypts a ciphertext that Seal produced for the same id with the same
// key. Any other input gives an error, never a panic.
func (b *Box) Open(id string, ciphertext []byte) ([]byte, error) {
	ns := b.aead.NonceSize()
	if len(ciphertext) < ns+b.aead.Overhead() {
		return nil, fmt.Errorf("secret: open credential %q: %w", id, errOpen)
	}
	plain, err := b.aead.Open(nil, ciphertext[:ns], ciphertext[ns:], []byte(id))
	if err != nil {
		return nil, fmt.Errorf("secret: open credential %q: %w", id, errOpen)
	}
	return plain, nil
}
