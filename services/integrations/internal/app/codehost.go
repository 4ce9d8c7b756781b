package app

// CodeHost keeps the code host's installations and their links to teams, and starts the
// linked teams' workflows from its deliveries.
type CodeHost struct{}
