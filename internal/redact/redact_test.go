package redact

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"
)

func TestStringAndEncodings(t *testing.T) {
	t.Parallel()
	var s Set
	s.Add("ghs_abcdefghijklmnop", "", "ab")
	in := "token=ghs_abcdefghijklmnop b64=" + base64.StdEncoding.EncodeToString([]byte("ghs_abcdefghijklmnop")) + " ab stays"
	got := s.String(in)
	if strings.Contains(got, "ghs_") || strings.Contains(got, base64.StdEncoding.EncodeToString([]byte("ghs_abcdefghijklmnop"))) || !strings.Contains(got, "ab stays") {
		t.Fatalf("got %q", got)
	}
}

func TestWriterCatchesSplitSecret(t *testing.T) {
	t.Parallel()
	var s Set
	s.Add("sk-ant-SECRETVALUE123")
	var out bytes.Buffer
	w := s.Writer(&out)
	for _, chunk := range []string{"line one\nkey is sk-an", "t-SECRET", "VALUE123 end\nmore", " text"} {
		w.Write([]byte(chunk))
	}
	w.Close()
	got := out.String()
	if strings.Contains(got, "SECRET") || got != "line one\nkey is *** end\nmore text" {
		t.Fatalf("got %q", got)
	}
}
