// Package jsondepth tells whether a JSON text nests arrays and objects deeper than a
// limit, without decoding it: decoders recurse once per level, so a hostile body of a
// million brackets must be refused before one reads it.
package jsondepth

// Exceeds reports whether raw nests arrays and objects more than limit levels deep. It
// counts brackets outside strings only, so it is cheap enough for every request; whether
// raw is JSON at all is the decoder's to say.
func Exceeds(raw []byte, limit int) bool {
	depth, inString, escaped := 0, false, false
	for _, b := range raw {
		if inString {
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
			continue
		}
		switch b {
		case '"':
			inString = true
		case '[', '{':
			if depth++; depth > limit {
				return true
			}
		case ']', '}':
			depth--
		}
	}
	return false
}
