"""The JSON API's shared pieces: who may call, how pages and errors look."""
