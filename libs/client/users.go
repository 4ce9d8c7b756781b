package client

import (
	"context"
	"iter"
	"net/http"
	"time"
)

// UserQuery filters a search of users; the zero value lists them all (non-admins see
// active users' names and emails only).
type UserQuery struct {
	Labels   map[string]string
	Statuses []string // active, inactive, pending, deleted
	IDs      []string
	Order    string // ASC or DESC (default)
	Sort     string // name (default), creationDate, status
	Page     int
	Limit    int // 1 to 1000 (default 1000)
}

// TokenQuery filters a search of tokens; the zero value lists those the caller may see.
type TokenQuery struct {
	Types      []string // global, team, workflow, user, session
	Principals []string
	From, To   time.Time
	Order      string // ASC (default) or DESC
	Sort       string // creationDate (default), name
	Page       int
	Limit      int // 1 to 1000 (default 1000)
}

// QueryUsers reads one page of users. queryUsers.
func (c *Client) QueryUsers(ctx context.Context, q UserQuery) (*Page[User], error) {
	v := newQuery().labels(q.Labels).list("status", q.Statuses).list("ids", q.IDs).
		str("order", q.Order).str("sort", q.Sort).page(q.Page, q.Limit)
	var out Page[User]
	_, err := c.call(ctx, http.MethodGet, p("user", "query"), v.values(), nil, &out)
	return ret(&out, err)
}

// Users yields every user matching q.
func (c *Client) Users(ctx context.Context, q UserQuery) iter.Seq2[User, error] {
	return all(ctx, q.Page, func(ctx context.Context, page int) (*Page[User], error) {
		q.Page = page
		return c.QueryUsers(ctx, q)
	})
}

// GetUser reads a user. getUser.
func (c *Client) GetUser(ctx context.Context, id string) (*User, error) {
	var out User
	_, err := c.call(ctx, http.MethodGet, p("user", id), nil, nil, &out)
	return ret(&out, err)
}

// UpdateUser changes a user (type and status: admins only). updateUser.
func (c *Client) UpdateUser(ctx context.Context, id string, u *UserRequest) error {
	_, err := c.call(ctx, http.MethodPatch, p("user", id), nil, u, nil)
	return err
}

// DeleteUser deletes a user, revoking their tokens and memberships. deleteUser.
func (c *Client) DeleteUser(ctx context.Context, id string) error {
	_, err := c.call(ctx, http.MethodDelete, p("user", id), nil, nil, nil)
	return err
}

// GetProfile reads the caller: who it is, its teams and permissions. getProfile.
func (c *Client) GetProfile(ctx context.Context) (*UserProfile, error) {
	var out UserProfile
	_, err := c.call(ctx, http.MethodGet, p("profile"), nil, nil, &out)
	return ret(&out, err)
}

// UpdateProfile changes the caller's name, displayName and labels. updateProfile.
func (c *Client) UpdateProfile(ctx context.Context, u *UserRequest) error {
	_, err := c.call(ctx, http.MethodPatch, p("profile"), nil, u, nil)
	return err
}

// CreateToken creates a token; its secret is in the answer's Token, shown this once.
// createToken.
func (c *Client) CreateToken(ctx context.Context, t *TokenCreateRequest) (*TokenCreateResponse, error) {
	var out TokenCreateResponse
	_, err := c.call(ctx, http.MethodPost, p("token"), nil, t, &out)
	return ret(&out, err)
}

// QueryTokens reads one page of tokens. queryTokens.
func (c *Client) QueryTokens(ctx context.Context, q TokenQuery) (*Page[Token], error) {
	v := newQuery().list("types", q.Types).list("principals", q.Principals).time("fromDate", q.From).
		time("toDate", q.To).str("order", q.Order).str("sort", q.Sort).page(q.Page, q.Limit)
	var out Page[Token]
	_, err := c.call(ctx, http.MethodGet, p("token", "query"), v.values(), nil, &out)
	return ret(&out, err)
}

// Tokens yields every token matching q.
func (c *Client) Tokens(ctx context.Context, q TokenQuery) iter.Seq2[Token, error] {
	return all(ctx, q.Page, func(ctx context.Context, page int) (*Page[Token], error) {
		q.Page = page
		return c.QueryTokens(ctx, q)
	})
}

// RevokeToken revokes a token, and the tokens it created, and answers it. revokeToken.
func (c *Client) RevokeToken(ctx context.Context, id string) (*Token, error) {
	var out Token
	_, err := c.call(ctx, http.MethodDelete, p("token", id), nil, nil, &out)
	return ret(&out, err)
}
