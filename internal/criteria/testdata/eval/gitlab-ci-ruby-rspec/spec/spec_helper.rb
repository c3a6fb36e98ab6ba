ROOT_PATH = File.expand_path(File.join(File.dirname(__FILE__), ".."))
