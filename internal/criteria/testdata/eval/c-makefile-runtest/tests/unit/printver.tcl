start_server {} {
    puts "Testing Redis version"
}
