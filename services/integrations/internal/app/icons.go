package app

import "encoding/base64"

// The integrations' icons, answered as URLs (GET /integration's `icon`): v4's web UI shows
// an integration's icon as an image's source. They are data URLs, so they show without
// Baton serving files or the browser reaching another site.
var (
	codehostIcon = svgURL(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><g fill="none" stroke="#161616" stroke-width="2"><circle cx="9" cy="7" r="3"/><circle cx="9" cy="25" r="3"/><circle cx="23" cy="11" r="3"/><path d="M9 10v12M23 14c0 6-14 4-14 8"/></g></svg>`)
	chatIcon     = svgURL(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><path d="M5 6h22v15H14l-6 5v-5H5z" fill="none" stroke="#161616" stroke-width="2" stroke-linejoin="round"/></svg>`)
)

func svgURL(svg string) string {
	return "data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString([]byte(svg))
}
