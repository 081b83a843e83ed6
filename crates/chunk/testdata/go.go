package server

import "net/http"

// Server serves HTTP.
type Server struct {
	addr string
}

type (
	// Handler handles a request.
	Handler interface {
		Serve(w http.ResponseWriter)
	}
	ID int
)

// Start starts the server.
func (s *Server) Start() error {
	return http.ListenAndServe(s.addr, nil)
}

func (s Stack[T]) Push(v T) {}

func New(addr string) *Server {
	return &Server{addr: addr}
}
