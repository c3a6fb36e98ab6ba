package tea

import "testing"

func TestQuit(t *testing.T) {
	if _, ok := Quit().(QuitMsg); !ok {
		t.Fatal("Quit must return QuitMsg")
	}
}
