package quote

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestCut(t *testing.T) {
	for _, tc := range []struct {
		name, s  string
		n        int
		wantHead string
		wantMore int
	}{
		{"short", "gfx90a", 80, "gfx90a", 0},
		{"exact", "abc", 3, "abc", 0},
		{"empty", "", 0, "", 0},
		{"ascii", "abcdef", 4, "abcd", 2},
		{"zero", "abc", 0, "", 3},
		{"negative", "abc", -5, "", 3},
		{"inside a two-byte rune", "aé", 2, "a", 2},
		{"after a two-byte rune", "aéb", 3, "aé", 1},
		{"inside a four-byte rune", "a😀b", 3, "a", 5},
		{"inside a three-byte rune", "€€", 4, "€", 3},
		{"invalid UTF-8 is cut anywhere", "a\x80\x80\x80\x80\x80", 3, "a\x80\x80", 3},
		{"truncated rune before the cut", "ab\xe2\x82", 3, "ab\xe2", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			head, more := Cut(tc.s, tc.n)
			assert.Equal(t, tc.wantHead, head)
			assert.Equal(t, tc.wantMore, more)
			assert.Equal(t, tc.s, head+tc.s[len(head):], "a prefix")
		})
	}
}

func TestQ(t *testing.T) {
	long := "gfx90a" + strings.Repeat("a", 1<<20)
	for _, tc := range []struct {
		name, s, want string
	}{
		{"short is strconv.Quote", "gfx90a:xnack+", `"gfx90a:xnack+"`},
		{"escapes", "a\"b\n", `"a\"b\n"`},
		{"empty", "", `""`},
		{"exactly Max", strings.Repeat("x", Max), strconv.Quote(strings.Repeat("x", Max))},
		{"one over", strings.Repeat("x", Max+1), `"` + strings.Repeat("x", Max) + `…" (1 more byte)`},
		{"a megabyte", long, `"gfx90a` + strings.Repeat("a", Max-6) + `…" (` + strconv.Itoa(len(long)-Max) + ` more bytes)`},
		{"rune boundary", strings.Repeat("x", Max-1) + "é", `"` + strings.Repeat("x", Max-1) + `…" (2 more bytes)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Q(tc.s))
		})
	}
}

func TestText(t *testing.T) {
	assert.Equal(t, "-5", Text("-5"))
	assert.Equal(t, strings.Repeat("é", Max/2)+"… (2 more bytes)", Text(strings.Repeat("é", Max/2+1)))
	assert.Equal(t, "a\n", Text("a\n"), "nothing escaped")
	assert.Equal(t, "abc… (3 more bytes)", Clip("abcdef", 3))
	assert.Equal(t, "abcdef", Clip("abcdef", 6))
}

func FuzzQ(f *testing.F) {
	for _, s := range []string{"", "gfx90a", strings.Repeat("é", 100), "a\xff\xfe", strings.Repeat("😀", 30)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q := Q(s)
		// Bounded: at most 4 escaped bytes per kept byte, plus the note.
		if len(q) > 4*Max+40 {
			t.Fatalf("Q of %d bytes is %d bytes long", len(s), len(q))
		}
		head, more := Cut(s, Max)
		if head+s[len(head):] != s || more != len(s)-len(head) || len(head) > Max {
			t.Fatalf("Cut(%q) = %q, %d", s, head, more)
		}
		if utf8.ValidString(s) && !utf8.ValidString(head) {
			t.Fatalf("Cut of valid UTF-8 %q gave invalid %q", s, head)
		}
		if more == 0 && q != strconv.Quote(s) {
			t.Fatalf("Q(%q) = %s, want strconv.Quote", s, q)
		}
	})
}
