module App; end
