package process

import (
	"regexp"
	"strings"
)

// mask is a secret pattern and what replaces it.
type mask struct {
	re   *regexp.Regexp
	repl string
}

// secretPatterns find common secrets in program output, for failure
// messages (spec/nodes.md, Shell Command). They are patterns only: a
// secret in no known shape stays visible. The key=value rule comes last, so
// that it sees values the shapes before it have already masked.
var secretPatterns = []mask{
	// Private key blocks, also when the text cuts them off at either end.
	{regexp.MustCompile(`(?s)-----BEGIN[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----.*?(?:-----END[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----|\z)`), "[private key masked]"},
	{regexp.MustCompile(`(?s)\A.*?-----END[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----`), "[private key masked]"},
	// Passwords in URLs: scheme://user:password@host.
	{regexp.MustCompile(`(\b[a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@]*:)[^/\s@]+@`), "${1}****@"},
	// HTTP authorization schemes.
	{regexp.MustCompile(`(?i)\b(bearer|basic)(\s+)[A-Za-z0-9._~+/=-]{8,}`), "${1}${2}****"},
	// JSON Web Tokens.
	{regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`), "[jwt masked]"},
	// AWS access key ids.
	{regexp.MustCompile(`\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b`), "AKIA****"},
	// GitHub and GitLab tokens.
	{regexp.MustCompile(`\b(gh[pousr]_)[A-Za-z0-9]{20,}`), "${1}****"},
	{regexp.MustCompile(`\b(github_pat_)[A-Za-z0-9_]{20,}`), "${1}****"},
	{regexp.MustCompile(`\b(glpat-)[A-Za-z0-9_-]{20,}`), "${1}****"},
	// API keys of the sk-... shape (OpenAI, Anthropic and others) and
	// Stripe keys.
	{regexp.MustCompile(`\b(sk-)[A-Za-z0-9_-]{16,}`), "${1}****"},
	{regexp.MustCompile(`\b((?:sk|rk|pk)_(?:live|test)_)[A-Za-z0-9]{16,}`), "${1}****"},
	// Slack tokens.
	{regexp.MustCompile(`\b(xox[abposr]-)[A-Za-z0-9-]{10,}`), "${1}****"},
	// Google API keys.
	{regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}`), "AIza****"},
	// key=value, key: value and "key": "value" where the key names a secret.
	{regexp.MustCompile(`(?i)(\b[a-z0-9_.-]*(?:passw(?:or)?d|passphrase|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credentials?|authorization|cookie)[a-z0-9_.-]*["']?\s*[:=]\s*(?:(?:bearer|basic|token)\s+)?)("[^"\n]*"|'[^'\n]*'|[^\s,;&"']+)`), "${1}****"},
}

// maskSecrets replaces the secrets secretPatterns find in s.
func maskSecrets(s string) string {
	for _, m := range secretPatterns {
		s = m.re.ReplaceAllString(s, m.repl)
	}
	return s
}

// maxTail is the most of a stream's end a failure message shows.
const maxTail = 2000

// failureTail returns the end of stderr, or of stdout when stderr holds
// nothing but white space, with secrets masked and at most maxTail bytes;
// "" when both are empty. Masking runs over a wider window than is shown,
// so that a secret cut by the window's start is still recognised.
func failureTail(stdout, stderr *capture) string {
	t := strings.TrimSpace(stderr.end())
	if t == "" {
		t = strings.TrimSpace(stdout.end())
	}
	t = strings.TrimSpace(maskSecrets(t))
	if len(t) > maxTail {
		t = "..." + string(cutFront([]byte(t), len(t)-maxTail))
	}
	return t
}

// withTail appends the output's end to a failure message.
func withTail(msg, tail string) string {
	if tail == "" {
		return msg
	}
	return msg + ": " + tail
}
