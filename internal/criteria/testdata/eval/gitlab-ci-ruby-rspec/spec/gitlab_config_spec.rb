require_relative 'spec_helper'
require_relative '../lib/gitlab_config'

describe GitlabConfig do
  it 'reads the auth file' do
    GitlabConfig.new.auth_file.should_not be_nil
  end
end
