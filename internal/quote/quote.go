// Package quote bounds user input that error messages and listings repeat:
// a malformed 1 MB argument must give a short error, not a 2 MB one. Q quotes
// like %q; Text shows the input as is. Both keep at most Max bytes of it, cut
// at a rune boundary, and say how much they left out.
package quote

import (
	"strconv"
	"unicode/utf8"
)

// Max is how many bytes of an input Q and Text keep.
const Max = 80

// ellipsis marks where an input was cut.
const ellipsis = "…"

// Cut returns s when it has at most n bytes; otherwise its longest prefix of
// at most n bytes that ends at a rune boundary, and how many bytes were left
// out. A negative n counts as 0.
func Cut(s string, n int) (head string, more int) {
	if n >= len(s) {
		return s, 0
	}
	cut := max(0, n)
	// s[cut] is the first byte left out: when it continues a valid rune that
	// starts before cut, cut before that rune. Invalid UTF-8 is cut anywhere.
	start := cut
	for start > 0 && start > cut-(utf8.UTFMax-1) && !utf8.RuneStart(s[start]) {
		start--
	}
	if start < cut {
		if r, size := utf8.DecodeRuneInString(s[start:]); (r != utf8.RuneError || size > 1) && start+size > cut {
			cut = start
		}
	}
	return s[:cut], len(s) - cut
}

// Q quotes s as strconv.Quote does when it has at most Max bytes. A longer s
// keeps its first Max bytes (cut at a rune boundary), an ellipsis inside the
// quotes, and a count of the rest: "gfx90aaaaa…" (1048500 more bytes).
func Q(s string) string {
	head, more := Cut(s, Max)
	q := strconv.Quote(head)
	if more == 0 {
		return q
	}
	return q[:len(q)-1] + ellipsis + `"` + moreBytes(more)
}

// Text returns s when it has at most Max bytes; a longer s keeps its first
// Max bytes (cut at a rune boundary) followed by an ellipsis and a count of
// the rest: gfx90aaaaa… (1048500 more bytes). It does not escape anything.
func Text(s string) string { return Clip(s, Max) }

// Clip is Text with a limit of n bytes instead of Max.
func Clip(s string, n int) string {
	head, more := Cut(s, n)
	if more == 0 {
		return s
	}
	return head + ellipsis + moreBytes(more)
}

func moreBytes(n int) string {
	if n == 1 {
		return " (1 more byte)"
	}
	return " (" + strconv.Itoa(n) + " more bytes)"
}
