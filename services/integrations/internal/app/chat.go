package app

// Chat is the chat platform's app: installs, slash commands, events, interactivity, and
// what is posted back to channels.
type Chat struct{}
